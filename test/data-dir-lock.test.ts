// One owner per DATA_DIR, and start-up failures an operator causes exit 78 with one line naming the variable: real
// server processes (dist/src/app/main.js) on one directory, a kill -9 of the owner, a directory this user may not write,
// a full disk (a tmpfs filled up, in a mount namespace of the server's own), and locks left by processes elsewhere.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { LOCK_FILE, lockDataDir } from '../dist/src/store/data-dir-lock.js';

t.setTimeout(120_000);
const ROOT = join(import.meta.dirname, '..');
const isRoot = process.getuid?.() === 0;

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Server {
  child: ChildProcess;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Resolves once the server listens; rejects if it exits first. */
  listening: Promise<void>;
}

/** `command` (default: node dist/src/app/main.js) with a server's environment. */
function serve(
  t: { teardown(fn: () => unknown): void },
  dataDir: string,
  options: { command?: string[]; uid?: number; env?: Record<string, string> } = {},
): Server {
  const [file, ...args] = options.command ?? [process.execPath, 'dist/src/app/main.js'];
  const child = spawn(file, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => /"msg":"listening"/.test(stdout) && resolve());
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${stdout}${stderr}`)));
  });
  listening.catch(() => {});
  return { child, exited, listening, stdout: () => stdout, stderr: () => stderr };
}

/** The one line on stderr, after checking it is one line with no stack trace and nothing listened. */
function refusalLine(t: Test, server: Server): string {
  const lines = server.stderr().trim().split('\n');
  t.equal(lines.length, 1, `one line on stderr: ${server.stderr()}`);
  t.notMatch(server.stderr(), /\n\s+at /, 'no stack trace');
  t.notMatch(server.stdout(), /"msg":"listening"/, 'nothing listened');
  return lines[0];
}

t.test(
  'a second server on a DATA_DIR exits 78 naming the owner; after a kill -9 of it the next one starts',
  async (t) => {
    const dataDir = tempDir(t);
    const owner = serve(t, dataDir);
    await owner.listening;
    const second = serve(t, dataDir);
    t.equal(await second.exited, 78, 'exit 78 (EX_CONFIG)');
    const line = refusalLine(t, second);
    t.match(line, /^DATA_DIR=/, 'naming the variable');
    t.match(line, new RegExp(`in use by process ${owner.child.pid}\\b`), "naming the owner's pid");
    t.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, owner.child.pid, 'the lock is untouched');

    owner.child.kill('SIGKILL');
    await owner.exited;
    const next = serve(t, dataDir);
    await next.listening;
    t.equal(
      JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid,
      next.child.pid,
      'the dead owner’s lock taken',
    );
    next.child.kill('SIGTERM');
    t.equal(await next.exited, 0, 'a clean stop');
    t.throws(() => readFileSync(join(dataDir, LOCK_FILE)), { code: 'ENOENT' }, 'and the lock is removed with it');
  },
);

t.test('locks of processes elsewhere: a live pid with another start time, other namespaces by refresh', async (t) => {
  const dataDir = tempDir(t);
  const path = join(dataDir, LOCK_FILE);
  const mine = () => {
    const lock = lockDataDir(dataDir);
    const holder = JSON.parse(readFileSync(path, 'utf8')).pid;
    lock.release();
    return holder;
  };
  const ours = (() => {
    const lock = lockDataDir(dataDir);
    const record = JSON.parse(readFileSync(path, 'utf8'));
    lock.release();
    return record;
  })();

  // Our own parent's pid runs, but not since the recorded start: the pid was reused, the owner is gone.
  writeFileSync(path, JSON.stringify({ ...ours, pid: process.ppid, startTicks: '1' }));
  t.equal(mine(), process.pid, 'a reused pid does not hold the directory');

  // Another pid namespace (a container sharing the volume): judged by how recently the owner refreshed the file.
  const foreign = { ...ours, pid: 7, host: 'node-b', pidNamespace: 'pid:[1]' };
  writeFileSync(path, JSON.stringify(foreign));
  t.throws(() => lockDataDir(dataDir), /in use by process 7 on node-b/, 'a fresh lock from elsewhere holds');
  const old = new Date(Date.now() - 60_000);
  utimesSync(path, old, old);
  t.equal(mine(), process.pid, 'one not refreshed for a minute does not');

  writeFileSync(path, 'not a record');
  t.equal(mine(), process.pid, 'nor does a file that is not a lock record');

  const held = lockDataDir(dataDir);
  t.teardown(() => held.release());
  t.throws(() => lockDataDir(dataDir), /in use by process \d+/, 'a second server in the same process is refused');
});

t.test(
  'a DATA_DIR this user may not write exits 78 with one line naming it',
  { skip: !isRoot && 'needs root to run the server as another user' },
  async (t) => {
    const parent = tempDir(t);
    chmodSync(parent, 0o755); // root's; the server runs as nobody
    // Through env(1): tap's NODE_OPTIONS (added to every spawn) make a child write into .tap/, which nobody cannot.
    const server = serve(t, join(parent, 'data'), {
      uid: 65534,
      command: ['env', '-u', 'NODE_OPTIONS', process.execPath, 'dist/src/app/main.js'],
    });
    t.equal(await server.exited, 78);
    t.match(refusalLine(t, server), /^DATA_DIR=".*\/data": cannot be used: .*EACCES/);
  },
);

t.test(
  'a full disk at start exits 78 with one line naming DATA_DIR',
  { skip: !isRoot && 'needs root to mount a tmpfs' },
  async (t) => {
    const mountPoint = tempDir(t);
    // A mount namespace of the server's own: the tmpfs goes away with it, whatever happens to the test.
    const script =
      `mount -t tmpfs -o size=64k tmpfs "$MNT" && mkdir "$MNT/data" && ` +
      `{ dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null; true; } && exec "$NODE" dist/src/app/main.js`;
    const server = serve(t, join(mountPoint, 'data'), {
      command: ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script],
      env: { MNT: mountPoint, NODE: process.execPath },
    });
    t.equal(await server.exited, 78);
    t.match(refusalLine(t, server), /^DATA_DIR=".*\/data": cannot be used: its disk is full \(ENOSPC\)/);
  },
);

t.test('a DATA_DIR whose path runs through a file exits 78 naming it', async (t) => {
  const parent = tempDir(t);
  mkdirSync(join(parent, 'x'));
  writeFileSync(join(parent, 'x', 'file'), '');
  const server = serve(t, join(parent, 'x', 'file', 'data'));
  t.equal(await server.exited, 78);
  t.match(refusalLine(t, server), /^DATA_DIR=.*: cannot be used: a part of the path is a file/);
});
