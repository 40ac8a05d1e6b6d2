// Keys that fail safe: a PIN key typo is refused (exit 78 naming the variable, never echoing it); the PIN key's
// check value is recorded beside the records and another key refuses to start; npm run rotate-pin-key moves every
// stored PIN to a new key, resumable after a real kill -9 mid-rotation; the oracle's key is held to the one the
// records were started with, and ORACLE_DID to it. Servers in this process (startServer) and real processes.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../dist/src/app/config.js';
import { openStore } from '../dist/src/store/env.js';
import { LmdbKeyChecks } from '../dist/src/store/key-checks.js';
import { identityContext } from '../dist/src/ussd/account-secrets.js';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';
import { LmdbCustomerRepository } from '../dist/src/ussd/customers/lmdb-repository.js';
import { PIN_CHECK, PIN_ROTATION } from '../dist/src/ussd/pin-key-check.js';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { logIn } from './helpers/ussd-gateway.js';
import { startTestServer } from './helpers/server.js';

t.setTimeout(180_000);
const ROOT = join(import.meta.dirname, '..');
const hexKey = () => randomBytes(32).toString('hex');

function dataDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `node <script> ...args` in ROOT with `env`; resolves with its exit and output (`onLine` sees stdout lines). */
function runNode(args: string[], env: Record<string, string>, onLine?: (line: string, kill: () => void) => void) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const line of chunk.split('\n')) if (line) onLine?.(line, () => child.kill('SIGKILL'));
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

const rotate = (
  dir: string,
  from: string,
  to: string,
  extra: Record<string, string> = {},
  onLine?: Parameters<typeof runNode>[2],
) =>
  runNode(
    ['dist/src/tools/keys.js', 'rotate-pin-key', '--page-size', extra.PAGE ?? '500'],
    { DATA_DIR: dir, PIN_ENCRYPTION_KEY: from, NEW_PIN_ENCRYPTION_KEY: to, ...extra },
    onLine,
  );

/** A server start in this process that must be refused: the refusal's variable and message. */
async function refused(t: Test, env: Record<string, string>, dir: string) {
  const error = await startTestServer(t, { dataDir: dir, env }).then(
    () => undefined,
    (err: { variable?: string; exitCode?: number; message: string }) => err,
  );
  t.equal(error?.exitCode, 78, `refused with exit 78: ${error?.message}`);
  return { variable: error?.variable, message: error?.message ?? '' };
}

/** `count` customers with PIN 12345, encrypted under `key`, written as the server writes them. */
/** The seeded accounts that also hold an identity key (their did:key), sealed by the same key as their PIN. */
const hasIdentity = (customerId: string) => /[05]$/.test(customerId);

async function seedCustomers(dir: string, key: string, count: number): Promise<string[]> {
  const store = openStore(dir);
  const cipher = new PinCipher(Buffer.from(key, 'hex'));
  const repo = new LmdbCustomerRepository(store);
  const ids = Array.from({ length: count }, (_, i) => `C${(0x10000000 + i).toString(16).toUpperCase()}`);
  await Promise.all(
    ids.map((customerId) =>
      repo.create({
        customerId,
        fullName: `Customer ${customerId}`,
        phoneNumber: '+254700000001',
        pin: cipher.encrypt('12345', customerId),
        ...(hasIdentity(customerId)
          ? { identityKey: cipher.encrypt(`identity of ${customerId}`, identityContext(customerId)) }
          : {}),
        failedPinAttempts: 0,
        createdAt: Date.now(),
      }),
    ),
  );
  await store.close();
  return ids;
}

/** How many stored PINs open with each key, and the key-check records. */
async function census(dir: string, keys: Record<string, string>) {
  const store = openStore(dir);
  const ciphers = Object.entries(keys).map(([name, key]) => [name, new PinCipher(Buffer.from(key, 'hex'))] as const);
  const counts: Record<string, number> = Object.fromEntries(Object.keys(keys).map((name) => [name, 0]));
  const identities: Record<string, number> = { ...counts };
  let apart = 0;
  const repo = new LmdbCustomerRepository(store);
  let after: string | undefined;
  do {
    const page = await repo.page(after, 1000);
    for (const { value } of page.records)
      for (const [name, cipher] of ciphers) {
        const pin = cipher.opens(value.pin, value.customerId);
        if (pin) counts[name]++;
        if (value.identityKey === undefined) continue;
        const identity = cipher.decrypt(value.identityKey, identityContext(value.customerId));
        if (identity === `identity of ${value.customerId}`) identities[name]++;
        if (pin !== (identity !== undefined)) apart++;
      }
    after = page.next;
  } while (after !== undefined);
  const checks = new LmdbKeyChecks(store);
  const rotation = await checks.get(PIN_ROTATION);
  const check = await checks.get<{ check: string }>(PIN_CHECK);
  await store.close();
  // `apart`: accounts whose PIN and identity key are under different keys (a rotation moves them together).
  return { counts, identities, apart, rotation, check };
}

t.test('a PIN key typo exits 78 naming the variable, without echoing the key', async (t) => {
  const lost = 'a'.repeat(63); // one character lost in a paste
  const run = await runNode(['dist/src/app/main.js'], {
    DATA_DIR: dataDir(t),
    NODE_ENV: 'production',
    PIN_ENCRYPTION_KEY: lost,
  });
  t.equal(run.code, 78, 'exit 78');
  t.match(
    run.stderr,
    /^Invalid configuration: PIN_ENCRYPTION_KEY=<63 characters, not shown>: has 63 hex characters[^\n]*\n$/,
  );
  t.notOk(run.stderr.includes(lost), 'the value is not in the message');
  for (const value of ['nothex', 'correct horse battery staple']) {
    t.throws(() => loadConfig({ PIN_ENCRYPTION_KEY: value }), {
      message:
        /^Invalid configuration: PIN_ENCRYPTION_KEY=<\d+ characters, not shown>: must be 64 hex characters .* or a passphrase of at least 32 characters/,
    });
  }
  t.equal(loadConfig({ PIN_ENCRYPTION_KEY: 'x'.repeat(32) }).PIN_ENCRYPTION_KEY, 'x'.repeat(32), '32 characters do');
});

t.test('the key check value is recorded at the first start; another key then refuses', async (t) => {
  const dir = dataDir(t);
  const key = hexKey();
  const first = await startTestServer(t, { dataDir: dir, env: { PIN_ENCRYPTION_KEY: key } });
  await first.shutdown();
  t.ok((await census(dir, {})).check, 'a check value is stored in DATA_DIR');

  const other = await refused(t, { PIN_ENCRYPTION_KEY: hexKey() }, dir);
  t.equal(other.variable, 'PIN_ENCRYPTION_KEY');
  t.match(other.message, /is not the key the PINs in DATA_DIR .* were encrypted with \(its check value/);
  const passphrase = await refused(t, { PIN_ENCRYPTION_KEY: 'a passphrase that is long enough to be one' }, dir);
  t.match(passphrase.message, /recorded .* from a hex key/, 'says what kind of key the records have');

  const process78 = await runNode(['dist/src/app/main.js'], { DATA_DIR: dir, PIN_ENCRYPTION_KEY: hexKey() });
  t.equal(process78.code, 78, 'the real process exits 78');
  t.match(
    process78.stderr.trim(),
    /^PIN_ENCRYPTION_KEY: PIN_ENCRYPTION_KEY is not the key[^\n]*$/,
    'one line naming it',
  );

  const again = await startTestServer(t, { dataDir: dir, env: { PIN_ENCRYPTION_KEY: key } });
  t.equal((await fetch(`${again.url}/health`)).status, 200, 'the right key starts');
  await again.shutdown();
});

t.test('records from before check values: a stored PIN tells a wrong key; a lost dev key file refuses', async (t) => {
  const dir = dataDir(t);
  const key = hexKey();
  await seedCustomers(dir, key, 3);
  const wrong = await refused(t, { PIN_ENCRYPTION_KEY: hexKey() }, dir);
  t.match(wrong.message, /customer C10000000's PIN does not open with it/);
  const right = await startTestServer(t, { dataDir: dir, env: { PIN_ENCRYPTION_KEY: key } });
  await right.shutdown();

  const dev = dataDir(t);
  await (await startTestServer(t, { dataDir: dev })).shutdown();
  unlinkSync(join(dev, 'pin-encryption.key'));
  const lost = await refused(t, {}, dev);
  t.match(lost.message, /the development key in DATA_DIR\/pin-encryption.key .* is not the key/);
});

t.test('rotate-pin-key: a kill -9 mid-rotation, then resumed to the end; only the new key starts', async (t) => {
  const dir = dataDir(t);
  const [a, b] = [hexKey(), hexKey()];
  const ids = await seedCustomers(dir, a, 2_000);

  // A real kill -9 from outside, once the first pages are committed (a page per PIN: thousands of commits to go).
  const killed = await rotate(dir, a, b, { PAGE: '1' }, (line, kill) => /^rewritten \d+ PINs/.test(line) && kill());
  t.equal(killed.signal, 'SIGKILL', 'killed mid-rotation');
  const midway = await census(dir, { a, b });
  t.ok(midway.counts.b > 0 && midway.counts.a > 0, `PINs under both keys: ${JSON.stringify(midway.counts)}`);
  t.equal(midway.counts.a + midway.counts.b, ids.length, 'every PIN opens with one of them');
  t.equal(midway.apart, 0, "each account's identity key moves with its PIN");
  t.ok(midway.rotation, 'the rotation is recorded as unfinished');
  for (const key of [a, b]) {
    const start = await refused(t, { PIN_ENCRYPTION_KEY: key }, dir);
    t.match(start.message, /a PIN key rotation of DATA_DIR .* is unfinished/, 'no server starts meanwhile');
  }
  const mixed = await rotate(dir, a, hexKey());
  t.equal(mixed.code, 78, 'another pair of keys may not take over the rotation');
  t.match(mixed.stderr, /from another pair of keys is unfinished/);

  // Resumed, and killed again between the last page and the switch of check values (the tool's own SIGKILL).
  const late = await rotate(dir, a, b, { CRASH_AT: 'pin-rotation-pages' });
  t.equal(late.signal, 'SIGKILL');
  const rewritten = await census(dir, { a, b });
  t.same(rewritten.counts, { a: 0, b: ids.length }, 'every PIN is under the new key');
  t.ok(rewritten.rotation, 'still unfinished: the check value is not switched yet');

  const done = await rotate(dir, a, b);
  t.equal(done.code, 0, done.stderr);
  t.match(done.stdout, /done: \d+ PINs encrypted under the new key/);
  const after = await census(dir, { a, b });
  t.same([after.counts, after.rotation], [{ a: 0, b: ids.length }, undefined], 'finished');
  t.same(
    after.identities,
    { a: 0, b: ids.filter(hasIdentity).length },
    'every identity key under the new key, readable',
  );

  t.match((await refused(t, { PIN_ENCRYPTION_KEY: a }, dir)).message, /is not the key/, 'the old key is refused');
  const server = await startTestServer(t, { dataDir: dir, env: { PIN_ENCRYPTION_KEY: b } });
  t.match(await logIn(server.url, ids[1234], '12345'), /^CON Hello Customer/, 'a customer logs in with the PIN');
  t.match(await logIn(server.url, ids[0], '54321'), /^CON Wrong PIN/, 'and a wrong PIN is still wrong');
  const busy = await rotate(dir, b, a);
  t.equal(busy.code, 78, 'the tool refuses a DATA_DIR a server owns');
  t.match(busy.stderr, new RegExp(`is in use by process ${process.pid}`));
  await server.shutdown();
});

t.test("the oracle's key is held to the one DATA_DIR was started with, and a did:key ORACLE_DID to it", async (t) => {
  const dir = dataDir(t);
  const [first, second] = [await generateKey(), await generateKey()];
  await (await startTestServer(t, { dataDir: dir, env: { ORACLE_PRIVATE_KEY: formatKey(first) } })).shutdown();
  const changed = await refused(t, { ORACLE_PRIVATE_KEY: formatKey(second) }, dir);
  t.equal(changed.variable, 'ORACLE_PRIVATE_KEY');
  t.match(
    changed.message,
    new RegExp(`is ${second.did()}, but DATA_DIR .* was started with the oracle key ${first.did()}`),
  );

  const did = await refused(t, { ORACLE_PRIVATE_KEY: formatKey(first), ORACLE_DID: second.did() }, dataDir(t));
  t.equal(did.variable, 'ORACLE_DID', 'a did:key that is not the key’s own');

  const adopted = await runNode(['dist/src/tools/keys.js', 'adopt-oracle-key'], { DATA_DIR: dir });
  t.equal(adopted.code, 0, adopted.stderr);
  t.match(adopted.stdout, new RegExp(`forgot the oracle key ${first.did()}`));
  const server = await startTestServer(t, { dataDir: dir, env: { ORACLE_PRIVATE_KEY: formatKey(second) } });
  await server.shutdown();
  t.match((await refused(t, { ORACLE_PRIVATE_KEY: formatKey(first) }, dir)).message, /was started with the oracle key/);
});
