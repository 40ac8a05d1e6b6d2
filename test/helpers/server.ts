// Starts the real (compiled) server in-process on an ephemeral port with a fresh DATA_DIR.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../dist/src/app/config.js';
import { createLogger, type Logger } from '../../dist/src/base/log.js';
import { startServer, type RunningServer } from '../../dist/src/app/server.js';
import { testEngine } from './engine.js';

export interface TestServer extends RunningServer {
  url: string;
  dataDir: string;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  dataDir?: string;
  /** Keep DATA_DIR after shutdown (for restart tests). */
  keepData?: boolean;
  /** The server's logger (default: silent). */
  log?: Logger;
}

/** `t` is a tap Test: the server is shut down (and its data removed) in teardown. */
export async function startTestServer(
  t: { teardown(fn: () => unknown): void },
  options: TestServerOptions = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'sar-test-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ACTOR_THREADS: '1',
    RATE_LIMIT_MAX: '100000',
    // Nothing sends during a test's teardown: no need to wait for stragglers on keep-alive connections.
    SHUTDOWN_QUIET_MS: '0',
    HTTP_ENGINE: testEngine(),
    ...options.env,
  });
  const server = await startServer(config, options.log ?? createLogger('silent'));
  let stopped = false;
  const shutdown = async (reason?: string) => {
    if (stopped) return;
    stopped = true;
    await server.shutdown(reason);
  };
  t.teardown(async () => {
    await shutdown();
    if (!options.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return { ...server, shutdown, url: `http://127.0.0.1:${server.port}`, dataDir };
}

/**
 * One server for a whole test file, started on the first call and shut down when the file's tests end (`t` is the
 * file's root tap object): for tests that need nothing of a fresh server (each has users, sessions and ids of its
 * own), so a file pays a server's start-up once instead of once per test.
 */
export function sharedTestServer(
  t: { teardown(fn: () => unknown): void },
  options: TestServerOptions = {},
): () => Promise<TestServer> {
  let server: Promise<TestServer> | undefined;
  return () => (server ??= startTestServer(t, options));
}
