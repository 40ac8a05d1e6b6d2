// Requests shaped as @ixo/oracles-client-sdk 1.4.0 makes them (oracle-wire-format.md, "What SDK 1.4.0 does on the
// wire"): every request sends `Content-Type: application/json` and `x-ucan-delegation` (no invocation), paths are
// not URL-encoded except the history route's id, and errors are read from the body's `statusCode`. Its SSE parser
// accepts only the event names it knows and numeric `id:` lines.
import { createParser } from 'eventsource-parser';
import { generateKey, mintDelegation } from '../../dist/src/tools/mint-ucan.js';

export interface SdkUser {
  did: string;
  delegation: string;
  headers(): Record<string, string>;
}

export async function sdkUser(oracleDid: string, ttlSeconds = 3600): Promise<SdkUser> {
  const key = await generateKey();
  const delegation = await mintDelegation({ issuer: key, audience: oracleDid, ttlSeconds });
  return {
    did: key.did(),
    delegation,
    headers: () => ({ 'content-type': 'application/json', 'x-ucan-delegation': delegation }),
  };
}

export interface HistoryPage {
  messages: { id: string; type: 'ai' | 'human'; content: string; [key: string]: unknown }[];
  prevCursor: string | null;
  nextCursor: string | null;
  hasOlder: boolean;
  hasNewer: boolean;
}

/** The SDK's fetchHistoryPage without its fallback: `GET /sessions/:id/messages?limit=..[&before|&after]`. */
export async function historyPage(
  base: string,
  user: SdkUser,
  sessionId: string,
  query: { limit: number; before?: string; after?: string },
): Promise<{ status: number; body: any }> {
  const params = new URLSearchParams({ limit: String(query.limit) });
  if (query.before) params.set('before', query.before);
  if (query.after) params.set('after', query.after);
  const res = await fetch(`${base}/sessions/${encodeURIComponent(sessionId)}/messages?${params.toString()}`, {
    headers: user.headers(),
  });
  return { status: res.status, body: await res.json() };
}

/** Event names the SDK's parser keeps; it drops every other. */
export const SDK_EVENTS = new Set([
  'message',
  'tool_call',
  'action_call',
  'error',
  'done',
  'router.update',
  'render_component',
  'browser_tool_call',
  'message_cache_invalidation',
  'reasoning',
  'run',
]);

export interface SdkFrame {
  event: string;
  data: any;
  /** The SSE `id:` line of the frame, when it had one. */
  id?: string;
}

/** Yields the frames of an SSE answer the SDK would act on, in order. */
export async function* sdkFrames(res: Response): AsyncGenerator<SdkFrame> {
  const queue: SdkFrame[] = [];
  const parser = createParser({
    onEvent: (event) => {
      const name = event.event ?? 'message';
      if (SDK_EVENTS.has(name))
        queue.push({ event: name, data: JSON.parse(event.data), ...(event.id !== undefined ? { id: event.id } : {}) });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
}

/** Sends a message as the SDK does (`stream: true`, `timezone` always). */
export function sdkSend(
  base: string,
  user: SdkUser,
  sessionId: string,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${base}/messages/${sessionId}`, {
    method: 'POST',
    headers: user.headers(),
    body: JSON.stringify({ timezone: 'Europe/Paris', ...body, stream: true }),
    signal,
  });
}

/** Reads every frame of a stream the SDK keeps. */
export async function sdkReadAll(res: Response): Promise<SdkFrame[]> {
  const frames: SdkFrame[] = [];
  for await (const frame of sdkFrames(res)) frames.push(frame);
  return frames;
}
