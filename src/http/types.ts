// Thread: main
// What a route handler sees and returns. Only src/http/ touches uWebSockets.js; faces use these types.
import type { Context } from '../telemetry/index.js';

export interface HttpRequest {
  readonly method: string; // upper case: GET, POST, ...
  readonly path: string;
  readonly rawQuery: string;
  /** Parsed on first use. */
  readonly query: URLSearchParams;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** Route parameters, URI-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The client address (resolved through trusted proxies' X-Forwarded-For, see proxy-trust.ts). */
  readonly ip: string;
  readonly requestId: string;
  /** Parsed JSON or form-urlencoded body; undefined when there is none. */
  readonly body: unknown;
  /** Set when a body was sent but could not be parsed. */
  readonly bodyError?: string;
  /** Aborted when the client goes away before the answer is complete. */
  readonly signal: AbortSignal;
  /**
   * Tracing on and this request sampled: the context of its server span, to pass to the calls it makes (actor
   * calls, the gateway's upstream call) so that their spans are its children. Otherwise undefined.
   */
  readonly trace?: Context;
}

export interface Reply {
  status: number;
  contentType: string;
  body: string | Uint8Array;
  headers?: Record<string, string>;
}

/** A streamed answer (SSE). `write` returns false when the socket is full: wait for `onDrain`. */
export interface StreamWriter {
  write(chunk: string): boolean;
  onDrain(listener: () => void): void;
  onClose(listener: () => void): void;
  end(): void;
  readonly closed: boolean;
}

export interface HttpResponse {
  /** Starts a streamed answer; the handler then returns nothing and ends the stream itself. */
  stream(status: number, headers: Record<string, string>): StreamWriter;
}

export type Handler = (req: HttpRequest, res: HttpResponse) => Reply | void | Promise<Reply | void>;

export const reply = {
  json(status: number, value: unknown, headers?: Record<string, string>): Reply {
    return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(value), headers };
  },
  text(status: number, text: string, headers?: Record<string, string>): Reply {
    return { status, contentType: 'text/plain; charset=utf-8', body: text, headers };
  },
  raw(status: number, contentType: string, body: string | Uint8Array, headers?: Record<string, string>): Reply {
    return { status, contentType, body, headers };
  },
};
