// What `npm start` tells a person (the real process): at a terminal (a pty, through script(1)) where to go once it
// listens; anywhere else the JSON log alone on stdout; and one line naming the missing secret (exit 78, which the
// systemd unit does not restart) when a production start lacks one.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

t.setTimeout(120_000);

function freshDataDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The server with stdout piped, or (`tty`) on a terminal of its own: script(1)'s pty, stdout and stderr both. */
function run(t: { teardown(fn: () => unknown): void }, env: Record<string, string>, tty = false) {
  // script(1) runs it through $SHELL -c. exec: the terminal's Ctrl-C must reach the server alone, since dash (CI's
  // /bin/sh) stays its parent otherwise and dies of the same SIGINT (script then exits 130).
  const command = `exec ${process.execPath} dist/src/app/main.js`;
  const child = spawn(
    tty ? 'script' : process.execPath,
    tty ? ['-qfec', command, '/dev/null'] : ['dist/src/app/main.js'],
    {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: freshDataDir(t), LOG_LEVEL: 'info', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  // A terminal ends its lines with CR LF.
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk.replaceAll('\r\n', '\n')));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  // The exit code, or the signal that ended it.
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  /** SIGTERM, or at a terminal Ctrl-C (the terminal's SIGINT), as a person stops it. */
  const stop = () => (tty ? child.stdin.write('\x03') : child.kill('SIGTERM'));
  return { child, exited, stop, stdout: () => stdout, stderr: () => stderr };
}

/** The last lines a process wrote: enough to see why it ended as it did. */
const tail = (text: string) => text.trimEnd().split('\n').slice(-8).join('\n');

t.test('npm start at a terminal prints where to go, and every address it prints answers', async (t) => {
  const server = run(t, { NODE_ENV: 'development' }, true);
  const banner = await new Promise<string>((resolve, reject) => {
    server.child.stdout.on('data', () => {
      const match = /^listening on .*\n(?: {2}.*\n)+/m.exec(server.stdout());
      if (match && /try USSD/.test(match[0])) resolve(match[0]);
    });
    void server.exited.then((code) =>
      reject(new Error(`the server exited with ${code}:\n${server.stdout()}${server.stderr()}`)),
    );
  });
  const base = /^listening on (http:\/\/127\.0\.0\.1:\d+) /.exec(banner)?.[1];
  t.ok(base, 'names the address to open');
  const line = (label: string) => new RegExp(`^ {2}${label} +(\\S+)$`, 'm').exec(banner)?.[1];
  t.equal(line('playground'), `${base}/playground`);
  t.equal(line('API docs'), `${base}/docs`);
  for (const label of ['playground', 'API docs', 'health']) {
    const response = await fetch(line(label)!);
    t.equal(response.status, 200, `${label} answers 200`);
    await response.arrayBuffer();
  }
  const config = (await (await fetch(`${base}/playground/config.json`)).json()) as { oracleDid: string };
  t.equal(line('oracle DID'), config.oracleDid, 'the oracle DID is the one UCANs must name');
  t.match(server.stdout(), /"msg":"listening"/, 'the JSON log is still written');
  t.ok(
    server.stdout().indexOf('"msg":"listening"') < server.stdout().indexOf('listening on http'),
    'the block comes after the log lines before it, uncut',
  );
  server.stop();
  // What the server said last, shown beside a failure: why it did not exit 0.
  const exited = await server.exited;
  t.equal(exited, 0, 'Ctrl-C drains and exits 0', { said: tail(server.stdout() + server.stderr()) });
});

t.test('a production start without PIN_ENCRYPTION_KEY exits 78 with one line naming it', async (t) => {
  const server = run(t, { NODE_ENV: 'production', PIN_ENCRYPTION_KEY: '' });
  t.equal(await server.exited, 78, 'exit 78 (EX_CONFIG): the systemd unit does not restart it');
  const lines = server.stderr().trim().split('\n');
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /PIN_ENCRYPTION_KEY/, 'naming the variable');
  t.match(lines[0], /NODE_ENV=production/, 'and why it is required');
  t.notMatch(server.stderr(), /\n\s+at /, 'no stack trace');
  t.equal(server.stdout(), '', 'nothing started');
});

t.test('the same start with the key set gets past configuration; piped, stdout is JSON alone', async (t) => {
  const server = run(t, { NODE_ENV: 'production', PIN_ENCRYPTION_KEY: 'a'.repeat(64) });
  await new Promise<void>((resolve, reject) => {
    server.child.stdout.on('data', () => {
      if (/"msg":"listening"/.test(server.stdout())) resolve();
    });
    void server.exited.then((code) => reject(new Error(`exited with ${code}:\n${server.stderr()}`)));
  });
  server.stop();
  t.equal(await server.exited, 0);
  const lines = server.stdout().trim().split('\n');
  t.ok(lines.length > 3, `${lines.length} log records`);
  t.same(
    lines.filter((line) => {
      try {
        return typeof JSON.parse(line).msg !== 'string';
      } catch {
        return true;
      }
    }),
    [],
    'every stdout line is a JSON log record: no banner off a terminal',
  );
});
