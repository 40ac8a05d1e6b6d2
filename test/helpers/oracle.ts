// Oracle test helpers: a server with a known oracle key, users with real ucanto-signed invocations,
// JSON calls, and an SSE reader built on eventsource-parser (the parser real clients use).
import { createParser } from 'eventsource-parser';
import type { Signer } from '@ucanto/interface';
import { formatKey, generateKey, mintInvocation } from '../../dist/src/tools/mint-ucan.js';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';

export interface OracleServer extends TestServer {
  oracleDid: string;
  oracleKey: Signer;
}

export async function startOracleServer(
  t: { teardown(fn: () => unknown): void },
  options: TestServerOptions = {},
): Promise<OracleServer> {
  const oracleKey = await generateKey();
  const server = await startTestServer(t, {
    ...options,
    env: { ORACLE_PRIVATE_KEY: formatKey(oracleKey), ORACLE_NAME: 'Test Oracle', ...options.env },
  });
  return { ...server, oracleDid: oracleKey.did(), oracleKey };
}

/** One oracle server for a whole test file (see sharedTestServer): started on the first call. */
export function sharedOracleServer(
  t: { teardown(fn: () => unknown): void },
  options: TestServerOptions = {},
): () => Promise<OracleServer> {
  let server: Promise<OracleServer> | undefined;
  return () => (server ??= startOracleServer(t, options));
}

export interface User {
  key: Signer;
  did: string;
  /** Fresh headers with a valid invocation (minted once per user and reused, as the SDK caches it). */
  headers(): Record<string, string>;
}

export async function newUser(oracleDid: string): Promise<User> {
  const key = await generateKey();
  const invocation = await mintInvocation({ issuer: key, audience: oracleDid, ttlSeconds: 600 });
  return {
    key,
    did: key.did(),
    headers: () => ({ authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' }),
  };
}

export interface JsonAnswer {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(
  server: { url: string },
  method: string,
  path: string,
  options: { user?: User; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<JsonAnswer> {
  const headers: Record<string, string> = { ...options.user?.headers(), ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const res = await fetch(`${server.url}${path}`, { method, headers, body, signal: options.signal });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export async function createSession(server: { url: string }, user: User): Promise<string> {
  const res = await call(server, 'POST', '/sessions', { user });
  if (res.status !== 201) throw new Error(`POST /sessions answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.sessionId;
}

export interface SseItem {
  event: string;
  data: any;
  /** The frame's text exactly as one network read delivered it is not knowable; `raw` is the data line. */
  raw: string;
}

/** Opens a streamed message; throws unless the answer is an SSE stream. */
export async function openStream(
  server: { url: string },
  user: User,
  sessionId: string,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Response> {
  const res = await fetch(`${server.url}/messages/${sessionId}`, {
    method: 'POST',
    headers: { ...user.headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
    signal,
  });
  return res;
}

/**
 * Yields SSE events (and comments as `{ event: ':comment' }`) as they arrive. The `run` frame that opens every
 * stream (resumable runs: test/oracle-runs.test.ts) is left out unless `withRun`: these readers are about the turn.
 */
export async function* sseEvents(res: Response, withRun = false): AsyncGenerator<SseItem> {
  const queue: SseItem[] = [];
  const parser = createParser({
    onEvent: (event) => {
      if (event.event === 'run' && !withRun) return;
      queue.push({ event: event.event ?? 'message', data: JSON.parse(event.data), raw: event.data });
    },
    onComment: (comment) => queue.push({ event: ':comment', data: comment.trim(), raw: comment }),
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
}

/** Reads a whole stream. */
export async function readSse(res: Response): Promise<SseItem[]> {
  const items: SseItem[] = [];
  for await (const item of sseEvents(res)) items.push(item);
  return items;
}

/** Waits until `check` holds, polling (for state that settles on another thread). */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  tries = 200,
): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
