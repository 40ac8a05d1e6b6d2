// A local stand-in for a hosted LLM: a node:http server speaking the chat-completions streaming protocol.
// Each request is answered by the next scripted responder; every request is recorded.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export type Responder = (res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export interface LlmStandIn {
  /** Base URL to use as LLM_BASE_URL, e.g. http://127.0.0.1:1234/v1 */
  baseUrl: string;
  requests: RecordedRequest[];
  script(...responders: Responder[]): void;
  close(): Promise<void>;
}

export async function startLlmStandIn(): Promise<LlmStandIn> {
  const requests: RecordedRequest[] = [];
  const queue: Responder[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: text ? JSON.parse(text) : undefined,
    });
    const responder = queue.shift();
    if (!responder || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    await responder(res, req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...responders) => queue.push(...responders),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A chat.completion.chunk with one choice. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'stand-in',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** Streams the events as `data:` lines, then `[DONE]` unless `done: false`. Strings are sent raw. */
export function sse(events: (Record<string, unknown> | string)[], options: { done?: boolean } = {}): Responder {
  return async (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of events) {
      res.write(typeof event === 'string' ? event : `data: ${JSON.stringify(event)}\n\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (options.done !== false) res.write('data: [DONE]\n\n');
    res.end();
  };
}

/** An error status with a JSON body, as OpenAI sends it. */
export function failWith(status: number, body: unknown): Responder {
  return (res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
}

/** A model answer that sends `first`, then waits until released (or until the oracle hangs up). */
export function heldAnswer(first: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let hungUp!: () => void;
  const closed = new Promise<void>((resolve) => (hungUp = resolve));
  const responder: Responder = async (res: ServerResponse) => {
    res.on('close', () => hungUp());
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk({ content: first }))}\n\n`);
    started();
    await Promise.race([released, closed]);
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(chunk({ content: 'and the rest.' }, 'stop'))}\n\ndata: [DONE]\n\n`);
    res.end();
  };
  return { responder, release, running, closed };
}
