// `npm run backup` (dist/src/tools/backup.js, its own process) against a live DATA_DIR: taken while USSD callers
// open accounts and chat users send messages, restored into a fresh DATA_DIR, it holds every account and message
// acknowledged before it began, and a server started on it serves them (a USSD login with the PIN, a transcript).
// And it refuses what would leave a half-written or misplaced copy.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { call, createSession, newUser, startOracleServer, type User } from './helpers/oracle.js';
import { openStore } from '../dist/src/store/env.js';
import { startTestServer } from './helpers/server.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

const run = promisify(execFile);
const PIN = '48207';

function backup(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, ['dist/src/tools/backup.js', ...args], { env: { ...process.env, ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

/** Opens an account through the menu; its customer ID once the server answered it. */
async function openAccount(url: string, sessionId: string): Promise<string> {
  const s = new GatewaySession(url, sessionId);
  // Each input with the screen it must lead to: a wrong screen is named where it appeared, not steps later.
  const steps: [string | undefined, RegExp][] = [
    [undefined, /^CON Welcome/],
    ['2', /^CON Account Menu/],
    ['2', /^CON Enter your full name/],
    ['Amina Wanjiru', /^CON Enter your email/],
    ['00', /^CON Choose a 5-digit PIN/],
    [PIN, /^CON Enter the same PIN/],
    [PIN, /^CON Account created!/],
  ];
  let screen = '';
  for (const [input, expected] of steps) {
    screen = await s.send(input);
    if (!expected.test(screen))
      throw new Error(`${sessionId}: after ${JSON.stringify(s.inputs)} the screen was ${JSON.stringify(screen)}`);
  }
  const id = /C[0-9A-F]{8}/.exec(screen)?.[0];
  if (!id) throw new Error(`no customer ID in ${JSON.stringify(screen)}`);
  return id;
}

async function logIn(url: string, sessionId: string, customerId: string): Promise<string> {
  const s = new GatewaySession(url, sessionId);
  for (const input of [undefined, '2', '1', customerId]) await s.send(input);
  return s.send(PIN);
}

function scratch(t: { teardown(fn: () => void): void }, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('a backup taken under USSD and chat load restores every acknowledged account and message', async (t) => {
  // No PIN_ENCRYPTION_KEY: the development key file in DATA_DIR, which the backup must carry for the PINs to open.
  const live = await startOracleServer(t);
  const ada = await newUser(live.oracleDid);
  const chats = [await createSession(live, ada), await createSession(live, ada)];

  // Acknowledged: the server answered it (the account's ID shown, the message's answer returned).
  const accounts: { id: string; at: number }[] = [];
  const messages: { sessionId: string; text: string; at: number }[] = [];
  let stopped = false;
  let n = 0;
  const ussdCaller = async (c: number) => {
    while (!stopped) {
      const id = await openAccount(live.url, `backup-open-${c}-${n++}`);
      accounts.push({ id, at: performance.now() });
    }
  };
  const chatter = async (sessionId: string, user: User) => {
    for (let i = 0; !stopped; i++) {
      const text = `message ${i} in ${sessionId}`;
      const res = await call(live, 'POST', `/messages/${sessionId}`, { user, body: { message: text } });
      if (res.status !== 200) throw new Error(`POST /messages answered ${res.status}`);
      messages.push({ sessionId, text, at: performance.now() });
    }
  };
  const load = Promise.all([ussdCaller(0), ussdCaller(1), ...chats.map((id) => chatter(id, ada))]);
  while (accounts.length < 2 || messages.length < 4) await new Promise((resolve) => setTimeout(resolve, 20));

  const out = join(scratch(t, 'sar-backups-'), 'copy');
  const began = performance.now();
  const taken = await backup(['--out', out], { DATA_DIR: live.dataDir });
  const ended = performance.now();
  stopped = true;
  await load;
  t.equal(taken.code, 0, taken.stderr);
  const during = (at: number) => at > began && at < ended;
  t.ok(
    accounts.some((a) => during(a.at)) && messages.some((m) => during(m.at)),
    'accounts and messages were acknowledged while the backup ran',
  );
  const summary = JSON.parse(taken.stdout);
  t.match(summary, { out, files: ['pin-encryption.key'] }, 'the development PIN key came with it');
  t.equal(statSync(join(out, 'pin-encryption.key')).mode & 0o777, 0o600, 'the key file stays private');
  t.same(readdirSync(out).sort(), ['data.mdb', 'pin-encryption.key'], 'no lock file, nothing half-written');

  const restoredDir = scratch(t, 'sar-restored-');
  cpSync(out, restoredDir, { recursive: true });
  const restored = await startTestServer(t, {
    dataDir: restoredDir,
    env: { ORACLE_PRIVATE_KEY: live.config.ORACLE_PRIVATE_KEY! },
  });
  const before = accounts.filter((account) => account.at < began);
  t.ok(before.length >= 2, `${before.length} accounts acknowledged before the backup began`);
  for (const [i, account] of before.entries())
    t.match(await logIn(restored.url, `backup-login-${i}`, account.id), /^CON Hello Amina/, `${account.id} logs in`);
  for (const sessionId of chats) {
    const res = await call(restored, 'GET', `/messages/${sessionId}`, { user: ada });
    t.equal(res.status, 200);
    const said = new Set(res.body.messages.filter((m: any) => m.type === 'human').map((m: any) => m.content));
    const acknowledged = messages.filter((m) => m.sessionId === sessionId && m.at < began);
    t.ok(acknowledged.length > 0);
    t.ok(
      acknowledged.every((m) => said.has(m.text)),
      `the transcript holds the ${acknowledged.length} messages acknowledged before the backup`,
    );
  }
});

t.test('the backup refuses a target it would overwrite, a missing DATA_DIR and a bad command line', async (t) => {
  const dir = scratch(t, 'sar-backup-args-');
  const dataDir = join(dir, 'data');
  await openStore(dataDir).close();
  const full = join(dir, 'full');
  mkdirSync(full);
  writeFileSync(join(full, 'keep-me'), 'an earlier backup');
  const [refused, inside, none, usage, bare] = await Promise.all([
    backup(['--out', full, '--data-dir', dataDir]),
    backup(['--out', join(dataDir, 'copy'), '--data-dir', dataDir]),
    backup(['--out', join(dir, 'x'), '--data-dir', join(dir, 'nowhere')]),
    backup(['--bogus']),
    backup([]),
  ]);
  t.equal(refused.code, 73);
  t.match(refused.stderr, /exists and is not an empty directory/);
  t.ok(existsSync(join(full, 'keep-me')), 'the earlier backup is untouched');
  t.equal(inside.code, 64);
  t.match(inside.stderr, /inside DATA_DIR/);
  t.equal(none.code, 66);
  t.match(none.stderr, /holds no LMDB environment/);
  t.notOk(existsSync(join(dir, 'x')), 'nothing was written');
  t.equal(usage.code, 64);
  t.match(usage.stderr, /Usage: npm run backup/);
  t.equal(bare.code, 64, '--out is required');
  t.same(
    readdirSync(dir).filter((name) => name.includes('partial')),
    [],
    'no partial copy left behind by any refusal',
  );
});
