// The oracle's REST routes and its SSE stream, every request signed with a fresh-enough UCAN invocation.
import { createParser } from 'eventsource-parser';
import type { UcanIdentity } from './ucan.js';
import { refusal } from './readable.js';

export interface SessionRecord {
  sessionId: string;
  title: string;
  createdAt: string;
  lastUpdatedAt: string;
}

export interface TranscriptItem {
  type: 'ai' | 'human';
  content: string;
  reasoning?: string;
  toolCalls?: { name: string; args: unknown; output?: string; status?: string }[];
}

export interface SseFrame {
  event: string;
  data: Record<string, unknown>;
}

export interface PageTool {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

/** An error answer of the oracle (NestJS-shaped body: `message` is a string or a list). */
export class OracleError extends Error {
  constructor(
    readonly status: number,
    message: string,
    retryAfter: string | null = null,
  ) {
    super(refusal(status, message, retryAfter));
  }
}

export async function failure(response: Response): Promise<OracleError> {
  const text = await response.text();
  const retryAfter = response.headers.get('retry-after');
  try {
    const body = JSON.parse(text) as { message?: string | string[] };
    const message = Array.isArray(body.message) ? body.message.join('; ') : body.message;
    return new OracleError(response.status, message ?? text, retryAfter);
  } catch {
    return new OracleError(response.status, text.slice(0, 200), retryAfter);
  }
}

export class OracleClient {
  constructor(readonly identity: UcanIdentity) {}

  async #fetch(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = await this.identity.headers();
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw await failure(response);
    return response;
  }

  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.#fetch(method, path, body)).json()) as T;
  }

  storeDelegation = async () => this.#json<{ ok: boolean }>('POST', '/delegation', await this.identity.delegation());
  createSession = () => this.#json<SessionRecord>('POST', '/sessions');
  listSessions = () => this.#json<{ sessions: SessionRecord[]; total: number }>('GET', '/sessions?limit=50');
  deleteSession = (id: string) => this.#json<unknown>('DELETE', `/sessions/${encodeURIComponent(id)}`);
  transcript = (id: string) => this.#json<{ messages: TranscriptItem[] }>('GET', `/messages/${encodeURIComponent(id)}`);
  abort = (sessionId: string) => this.#json<{ success: boolean }>('POST', '/messages/abort', { sessionId });

  /** Sends a message with `stream: true` and hands each SSE frame to `onFrame` as it arrives, until `done`. */
  async stream(
    sessionId: string,
    message: string,
    tools: PageTool[],
    onFrame: (frame: SseFrame) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const response = await this.#fetch(
      'POST',
      `/messages/${encodeURIComponent(sessionId)}`,
      { message, stream: true, tools },
      signal,
    );
    const parser = createParser({
      onEvent(event) {
        try {
          onFrame({ event: event.event ?? 'message', data: JSON.parse(event.data) as Record<string, unknown> });
        } catch {
          onFrame({ event: 'error', data: { error: `unreadable frame: ${event.data.slice(0, 100)}` } });
        }
      },
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(value);
    }
  }

  /** The event channel's URL; browsers cannot set headers on a WebSocket, so the invocation is a query value. */
  async socketUrl(sessionId: string): Promise<string> {
    const url = new URL('/ws', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('sessionId', sessionId);
    url.searchParams.set('invocation', await this.identity.invocation());
    return url.href;
  }
}
