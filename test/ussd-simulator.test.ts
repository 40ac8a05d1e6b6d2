import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const SIMULATOR = fileURLToPath(new URL('../dist/src/tools/ussd-simulator.js', import.meta.url));

function run(args: string[], env: Record<string, string> = {}, input = '') {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [SIMULATOR, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

t.test('a refused connection gives a clear message and exit code 1', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}/api/ussd`;
  const result = await run([], { USSD_URL: url }, '1\n');
  t.equal(result.code, 1);
  t.match(result.stdout, `Dialling *384# from +254712345678 (${url})`);
  t.match(result.stderr, `Cannot reach the USSD server at ${url}: connection refused. Is it running?`);
});

t.test('flags override the environment', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}/api/ussd`;
  const result = await run(['--url', url, '--phone', '+233201234567', '--code', '*123*4#'], {
    USSD_URL: 'http://127.0.0.1:9/x',
  });
  t.match(result.stdout, `Dialling *123*4# from +233201234567 (${url})`);
  t.match(result.stderr, 'connection refused');
});

t.test('--help prints the usage; an unknown flag is refused with it', async (t) => {
  const help = await run(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /Usage: npm run ussd -- \[--url URL\]/);
  const bad = await run(['--nope']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /Unknown option '--nope'[\s\S]*Usage:/);
});
