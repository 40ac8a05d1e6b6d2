// Where no native uWS build loads (Node.js 22 on this glibc: the official build needs glibc 2.38, the trufflesuite
// build has no Node 22 binary): auto starts the portable engine with our own warning saying why, and nothing of the
// trufflesuite loader's ("Falling back to a NodeJS implementation") on stderr; HTTP_ENGINE=uws exits 78 with one
// line naming the variable. The real server on the registry's Node.js 22 (test/helpers/node-lines.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { nodeBinary, nodeLinesSkip } from './helpers/node-lines.js';

t.setTimeout(300_000);
const ROOT = join(import.meta.dirname, '..');

/** The server on `node` with `env`; resolves once it listens (then stops it) or exits. */
function serve(t: Test, node: string, env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-engine-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = spawn(node, ['dist/src/app/main.js'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let health: Promise<number> | undefined;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    const port = /"port":(\d+)[^\n]*"msg":"listening"/.exec(stdout)?.[1];
    // Answered, so its signal handlers are in place (they follow the listening line): then a drain and exit 0.
    health ??= port
      ? fetch(`http://127.0.0.1:${port}/health`)
          .then((res) => res.status)
          .finally(() => child.kill('SIGTERM'))
      : undefined;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise<{ code: number | null; stdout: string; stderr: string; health?: number }>((resolve) =>
    child.once('exit', async (code) => resolve({ code, stdout, stderr, health: await health?.catch(() => 0) })),
  );
}

t.test(
  'Node.js 22 without a native build: our own warning, no loader noise; HTTP_ENGINE=uws exits 78',
  { skip: nodeLinesSkip },
  async (t) => {
    const node = await nodeBinary(22);
    const [auto, uws] = await Promise.all([
      serve(t, node, { HTTP_ENGINE: 'auto' }),
      serve(t, node, { HTTP_ENGINE: 'uws' }),
    ]);
    const engine = auto.stdout.split('\n').find((line) => line.includes('HTTP engine'));
    if (engine && !engine.includes('node:http'))
      return void t.pass(`a native build loads here, nothing to check: ${engine}`);

    t.equal(auto.health, 200, 'auto: the portable engine serves');
    t.equal(auto.code, 0, 'and stops cleanly');
    t.match(JSON.parse(engine ?? '{}'), {
      level: 40,
      msg: /^HTTP engine: node:http, the portable engine: no native uWebSockets.js build loads here/,
      reason: /trufflesuite: no binary for Node\.js 22\.[\d.]+ \(ABI \d+\)/,
    });
    t.equal(auto.stderr, '', 'nothing on stderr: no "Falling back to a NodeJS implementation"');

    t.equal(uws.code, 78, 'HTTP_ENGINE=uws: exit 78');
    t.match(
      uws.stderr,
      /^HTTP_ENGINE=uws: no native uWebSockets\.js build loads here \(official: [^\n]*\); set HTTP_ENGINE=auto or node\n$/,
      'one line naming it',
    );
  },
);
