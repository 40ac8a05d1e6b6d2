// Shared by the load-tool tests: run `node dist/src/tools/load.js` as a child process, stub HTTP servers in this
// process, and a delay server in a child process (so that it can be paused with SIGSTOP).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

type Teardown = { teardown(fn: () => unknown): void };

const LOAD = fileURLToPath(new URL('../dist/src/tools/load.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the load tool; `onLine` sees each stdout line as it comes. */
export function runLoadCli(args: string[], onLine?: (line: string) => void): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [LOAD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) onLine?.(line);
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the load tool in this process (no start-up cost; its printing is captured, not shown). */
export async function runLoadInProcess(args: string[]): Promise<CliRun> {
  const { main } = await import('../dist/src/tools/load.js');
  const { log, error } = console;
  let stdout = '';
  let stderr = '';
  console.log = (...parts: unknown[]) => void (stdout += `${parts.join(' ')}\n`);
  console.error = (...parts: unknown[]) => void (stderr += `${parts.join(' ')}\n`);
  try {
    return { code: await main(args), stdout, stderr };
  } finally {
    Object.assign(console, { log, error });
  }
}

/** A temporary directory removed in teardown. */
export function tempDir(t: Teardown): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-load-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** An HTTP server in this process on an ephemeral loopback port; closed in teardown. */
export async function startStub(
  t: Teardown,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<string> {
  const server = createServer(handler);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

// Answers every request after `DELAY` ms; prints its port, then FIRST at the first request.
const DELAY_SERVER = `
const http = require('node:http');
let first = true;
const server = http.createServer((req, res) => {
  if (first) { first = false; console.log('FIRST'); }
  setTimeout(() => res.end('{"ok":true}'), Number(process.env.DELAY));
});
server.keepAliveTimeout = 30000;
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => console.log('PORT ' + server.address().port));
`;

export interface ChildServer {
  url: string;
  pid: number;
  /** Resolves at the first request the server receives. */
  firstRequest: Promise<void>;
}

/** A server in a child process (so it can be stopped with SIGSTOP) that answers after `delayMs`. */
export async function startDelayServer(t: Teardown, delayMs: number): Promise<ChildServer> {
  const child = spawn(process.execPath, ['-e', DELAY_SERVER], {
    env: { ...process.env, DELAY: String(delayMs) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  });
  let onFirst!: () => void;
  const firstRequest = new Promise<void>((resolve) => (onFirst = resolve));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`delay server exited with ${code}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      const match = /PORT (\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
      if (text.includes('FIRST')) onFirst();
    });
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, firstRequest };
}
