// Thread: any
// What an H2Connection is given: its options, and the events it reports to its channel.
import type { H2Connection } from './connection.js';
import type { UnaryCall } from './unary-call.js';

export interface ConnectionOptions {
  authority: string;
  /** 0: no keepalive PINGs. */
  keepaliveMs: number;
  /** TLS: `:scheme https`, and the socket is ready at 'secureConnect' (with ALPN h2), not at 'connect'. */
  tls: boolean;
  /** Appended to the failure of a plaintext connection that connected and never saw HTTP/2 (it may be a TLS port). */
  plaintextHint?: string;
  describeError(error: Error, connected: boolean): string;
}

export interface ConnectionEvents {
  /** The connection takes no new calls (GOAWAY, failure, close): the channel dials another for the next call. */
  unusable(connection: H2Connection): void;
  /** Calls the node never saw (queued here, or above a GOAWAY's last stream id): to be sent on another connection. */
  retry(calls: UnaryCall[]): void;
  /** The node's first SETTINGS arrived: it speaks HTTP/2. */
  reached(connection: H2Connection): void;
}
