import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startTestServer } from './helpers/server.js';
import { docExampleDir } from './helpers/ussd-doc-example.js';

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

t.test(
  'against a server of two services: --list lists them; a session pages, ends, then dials another code',
  async (t) => {
    const server = await startTestServer(t, { env: { USSD_SERVICES_DIR: docExampleDir(t) } });
    const url = `${server.url}/api/ussd`;
    const list = await run(['--url', url, '--list']);
    t.equal(list.code, 0, list.stderr);
    t.equal(
      list.stdout,
      'Services:\n  *384#, *123#  Customer accounts (builtin 1.0.0)\n  *500#, *500*1# (crops)  Market prices (market 1.0.0)\n',
    );

    // The crop list's page 2, an option chosen there, home, exit; then *384# typed at "Dial again?", and its exit.
    const session = await run(['--url', url, '--code', '*500#'], {}, '1\n98\n13\n00\n*\n*384#\n*\n');
    t.equal(session.code, 0, session.stderr);
    const out = session.stdout;
    t.match(out, /^Services:\n {2}\*384#, \*123# {2}Customer accounts[\s\S]*\nDialling \*500# from \+254712345678/);
    t.match(out, /CON\nChoose a crop:\n1\. Maize\n[\s\S]*\n98\. More\n0\. Back\n/);
    t.match(out, /> 98\n-+ CON\n12\. Coffee \(cherry\)\n13\. Tomatoes\n14\. Onions\n15\. Cabbages\n0\. Back\n/);
    t.match(out, /> 13\n-+ CON\nToday: KES 60 per kg\.\n0\. Back\n00\. Home\n/);
    t.match(out, /> \*\n-+ END\nThank you\. Goodbye!\n/);
    t.match(out, /Dial again\? [^\n]*\*384#\nDialling \*384# from \+254712345678\n-+ CON\nWelcome! Choose an option:/);
    t.match(out, /END\nThank you for using our service\. Goodbye!\n-+\nSession ended\. Dial again\? [^\n]*$/);
  },
);

t.test('--list without a server: the reason, exit 1', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}/api/ussd`;
  const result = await run(['--url', url, '--list']);
  t.equal(result.code, 1);
  t.match(result.stderr, `Cannot reach the USSD server at ${url}/services: connection refused.`);
});
