// A real local HTTP server standing in for an operator's backend or SMS service: each path answers in a way of
// its own (JSON, a hang, 500, text, 10 MB, refusals then acceptance), and every call is recorded, so a test counts
// the calls and reads their headers and bodies.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, call: RecordedCall) => void;

export interface Backend {
  url: string;
  port: number;
  calls: RecordedCall[];
  /** The calls to `path`. */
  callsTo(path: string): RecordedCall[];
  /** Resolves with the next call to `path` (already made: the first). */
  nextCall(path: string, after?: number): Promise<RecordedCall>;
  close(): Promise<void>;
}

export const json = (res: ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

/** Starts the server on `port` (0: any free one); it is closed (with its hung requests) in teardown. */
export async function startBackend(
  t: { teardown(fn: () => unknown): void },
  handlers: Record<string, Handler>,
  port = 0,
): Promise<Backend> {
  const calls: RecordedCall[] = [];
  const waiters: { path: string; after: number; resolve(call: RecordedCall): void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {}
      const call = { path, headers: req.headers, body };
      calls.push(call);
      const handler = handlers[path];
      if (handler) handler(req, res, call);
      else json(res, 404, { error: 'no such path' });
      for (const waiter of [...waiters]) {
        const seen = calls.filter((c) => c.path === waiter.path);
        if (seen.length > waiter.after) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(seen[waiter.after]!);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  t.teardown(close);
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    calls,
    callsTo: (path) => calls.filter((call) => call.path === path),
    nextCall: (path, after = 0) =>
      new Promise((resolve) => {
        const seen = calls.filter((call) => call.path === path);
        if (seen.length > after) resolve(seen[after]!);
        else waiters.push({ path, after, resolve });
      }),
    close,
  };
}

/** A port nothing listens on now (taken and let go): a backend can start there later. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A directory holding one service definition (YAML text), removed in teardown. */
export function serviceDir(t: { teardown(fn: () => unknown): void }, yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-services-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'service.yaml'), yaml);
  return dir;
}
