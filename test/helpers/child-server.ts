// The real server as its own process (dist/src/app/main.js) on an ephemeral port with a fresh DATA_DIR, for
// signal tests, on the engine of the test file (TEST_HTTP_ENGINE). It is killed and its data removed in teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testEngine } from './engine.js';

export interface ChildServer {
  child: ChildProcess;
  port: number;
  url: string;
  /** Its exit code. */
  exited: Promise<number | null>;
  /** Everything it logged so far (JSON lines). */
  output(): string;
}

/** `given`: a DATA_DIR of the caller's (kept: a restart on it reads what the last process wrote). */
export async function startChildServer(
  t: { teardown(fn: () => unknown): void },
  env: Record<string, string> = {},
  given?: string,
): Promise<ChildServer> {
  const dataDir = given ?? mkdtempSync(join(tmpdir(), 'sar-child-'));
  if (!given) t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = spawn(process.execPath, ['dist/src/app/main.js'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: '1000000',
      HTTP_ENGINE: testEngine(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // If the test fails or times out, the server must not outlive it.
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  const port = await new Promise<number>((resolve) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output);
      if (match) resolve(Number(match[1]));
    });
  });
  return { child, port, url: `http://127.0.0.1:${port}`, exited, output: () => output };
}
