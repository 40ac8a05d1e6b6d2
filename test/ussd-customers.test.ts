import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openStore } from '../dist/src/store/env.js';
import { CustomerAccounts } from '../dist/src/ussd/actor/customer-accounts.js';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';
import { parseCustomerId } from '../dist/src/ussd/customers/repository.js';
import { LmdbCustomerRepository } from '../dist/src/records/lmdb/ussd/customers.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);

// mkdtemp, not t.testdir(): lmdb treats a path whose last segment has a dot (".test.ts-...") as a file.
function setup(t: any, key = randomBytes(32)) {
  const dir = mkdtempSync(join(tmpdir(), 'ussd-customers-'));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const customers = new CustomerAccounts(new LmdbCustomerRepository(store), new PinCipher(key), { pinLockMinutes: 30 });
  return { dir, store, customers, key };
}

const amina = { fullName: 'Amina Otieno', email: 'amina@example.org', phoneNumber: '+254712345678', pin: '48213' };

t.test('customer IDs are read as typed on a phone', async (t) => {
  t.equal(parseCustomerId('C1A2B3C4D'), 'C1A2B3C4D');
  t.equal(parseCustomerId(' c1a2b3c4d '), 'C1A2B3C4D');
  t.equal(parseCustomerId('1a2b3c4d'), 'C1A2B3C4D');
  for (const bad of ['', 'C', 'C1A2B3C', 'C1A2B3C4DE', 'D1A2B3C4D', 'C1A2B3C4G', '1*2'])
    t.equal(parseCustomerId(bad), undefined, bad);
});

t.test(
  'create with the same creation key answers the account made first (a retried step), another key makes another',
  async (t) => {
    const { store, customers } = setup(t);
    const first = await customers.create(amina, T0, 'session-1|12|digest');
    t.same(
      await customers.create({ ...amina, fullName: 'Someone Else' }, T0 + 1, 'session-1|12|digest'),
      first,
      'the same account',
    );
    const other = await customers.create(amina, T0, 'session-1|20|digest');
    t.not(other.customerId, first.customerId, 'a later step of the session is another creation');
    t.equal(store.db('ussd-customers').getKeysCount(), 2);
  },
);

t.test('create stores an account with a unique ID and never exposes the PIN', async (t) => {
  const { store, customers } = setup(t);
  const created = await customers.create(amina, T0);
  t.match(created.customerId, /^C[0-9A-F]{8}$/);
  t.same(created, {
    customerId: created.customerId,
    fullName: 'Amina Otieno',
    email: 'amina@example.org',
    phoneNumber: '+254712345678',
    failedPinAttempts: 0,
    createdAt: T0,
    did: created.did,
  });
  t.match(created.did, /^did:key:z6Mk/, 'an Ed25519 did:key made with the account (docs/ussd-ask.md)');
  t.same(await customers.get(created.customerId), created);
  t.same(await customers.get(created.customerId.toLowerCase()), created);
  const raw = store.db<any>('ussd-customers').get(created.customerId);
  t.type(raw.pin, 'string');
  t.notMatch(raw.pin, /48213/, 'PIN stored encrypted');
  const noEmail = await customers.create({ ...amina, email: undefined }, T0);
  t.notOk('email' in (await customers.get(noEmail.customerId))!);
  const ids = new Set([created.customerId, noEmail.customerId]);
  for (let i = 0; i < 50; i++) ids.add((await customers.create(amina, T0)).customerId);
  t.equal(ids.size, 52);
  t.equal(await customers.get('C00000000'), undefined);
  t.equal(await customers.get('garbage'), undefined);
});

t.test('a right PIN is ok, a wrong one says how many attempts are left', async (t) => {
  const { customers } = setup(t);
  const { customerId } = await customers.create(amina, T0);
  const ok = await customers.verifyPin(customerId, '48213', T0);
  t.equal(ok.result, 'ok');
  t.notOk('pin' in (ok as any).customer);
  t.same(await customers.verifyPin(customerId, '11112', T0), { result: 'wrong', attemptsLeft: 2 });
  t.same(await customers.verifyPin(customerId, '11112', T0), { result: 'wrong', attemptsLeft: 1 });
  t.equal((await customers.verifyPin(customerId, '48213', T0)).result, 'ok', 'success resets the counter');
  t.same(await customers.verifyPin(customerId, '11112', T0), { result: 'wrong', attemptsLeft: 2 });
  t.same(await customers.verifyPin('C00000000', '48213', T0), { result: 'unknown' });
  t.same(await customers.verifyPin('nonsense', '48213', T0), { result: 'unknown' });
});

t.test('three wrong PINs lock the account, even the right PIN, until the lock expires by itself', async (t) => {
  const { customers } = setup(t);
  const { customerId } = await customers.create(amina, T0);
  await customers.verifyPin(customerId, '00001', T0);
  await customers.verifyPin(customerId, '00002', T0 + 1000);
  const until = T0 + 2000 + 30 * MINUTE;
  t.same(await customers.verifyPin(customerId, '00003', T0 + 2000), { result: 'locked', until, lockedNow: true });
  t.equal((await customers.get(customerId))!.lockedUntil, until);
  t.same(await customers.verifyPin(customerId, '48213', T0 + 10 * MINUTE), {
    result: 'locked',
    until,
    lockedNow: false,
  });
  t.same(await customers.verifyPin(customerId, '48213', until - 1), { result: 'locked', until, lockedNow: false });
  const after = await customers.verifyPin(customerId, '48213', until);
  t.equal(after.result, 'ok', 'the lock expires by itself');
  t.equal((await customers.get(customerId))!.failedPinAttempts, 0);
  t.equal((await customers.get(customerId))!.lockedUntil, undefined);
});

t.test('after an expired lock a wrong PIN starts a fresh count', async (t) => {
  const { customers } = setup(t);
  const { customerId } = await customers.create(amina, T0);
  for (const pin of ['00001', '00002', '00003']) await customers.verifyPin(customerId, pin, T0);
  t.same(await customers.verifyPin(customerId, '00004', T0 + 31 * MINUTE), { result: 'wrong', attemptsLeft: 2 });
});

t.test('changePin replaces the PIN and clears the counter', async (t) => {
  const { customers } = setup(t);
  const { customerId } = await customers.create(amina, T0);
  await customers.verifyPin(customerId, '00001', T0);
  t.equal(await customers.changePin(customerId, '70395'), true);
  t.equal((await customers.get(customerId))!.failedPinAttempts, 0);
  t.same(await customers.verifyPin(customerId, '48213', T0), { result: 'wrong', attemptsLeft: 2 });
  t.equal((await customers.verifyPin(customerId, '70395', T0)).result, 'ok');
  t.equal(await customers.changePin('C00000000', '70395'), false);
});

t.test('accounts survive a reopen of the store with the same key', async (t) => {
  const key = randomBytes(32);
  const { dir, store, customers } = setup(t, key);
  const { customerId } = await customers.create(amina, T0);
  await customers.verifyPin(customerId, '00001', T0);
  await store.close();
  const reopened = openStore(dir);
  t.teardown(() => reopened.close());
  const again = new CustomerAccounts(new LmdbCustomerRepository(reopened), new PinCipher(key), { pinLockMinutes: 30 });
  t.same(
    await again.verifyPin(customerId, '00002', T0),
    { result: 'wrong', attemptsLeft: 1 },
    'the counter is durable',
  );
  t.equal((await again.verifyPin(customerId, '48213', T0)).result, 'ok');
});

// Sessions of one customer can run on different actor hosts: the counter must be exact under contention.
t.test('wrong PINs from two threads at once are counted exactly', async (t) => {
  const { dir, store, customers, key } = setup(t);
  const { customerId } = await customers.create(amina, T0);
  await store.close();
  const source = `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const { openStore } = await import(workerData.env);
      const { CustomerAccounts } = await import(workerData.customers);
      const { LmdbCustomerRepository } = await import(workerData.repository);
      const { PinCipher } = await import(workerData.cipher);
      const store = openStore(workerData.dir);
      const customers = new CustomerAccounts(new LmdbCustomerRepository(store), new PinCipher(Buffer.from(workerData.key, 'hex')), { pinLockMinutes: 30 });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        customers.verifyPin(workerData.customerId, String(10000 + i), workerData.now)));
      await store.close();
      parentPort.postMessage(results);
    })().catch((error) => { throw error; });
  `;
  const moduleUrl = (path: string) => new URL(path, import.meta.url).href;
  const run = () =>
    new Promise<any[]>((resolve, reject) => {
      const worker = new Worker(source, {
        eval: true,
        workerData: {
          dir,
          customerId,
          now: T0,
          key: key.toString('hex'),
          env: moduleUrl('../dist/src/store/env.js'),
          customers: moduleUrl('../dist/src/ussd/actor/customer-accounts.js'),
          repository: moduleUrl('../dist/src/records/lmdb/ussd/customers.js'),
          cipher: moduleUrl('../dist/src/ussd/actor/pin-cipher.js'),
        },
      });
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  const results = (await Promise.all([run(), run()])).flat();
  t.equal(results.length, 40);
  const wrong = results
    .filter((r) => r.result === 'wrong')
    .map((r) => r.attemptsLeft)
    .sort();
  t.same(wrong, [1, 2], 'exactly two wrong answers before the lock, each count seen once');
  t.equal(results.filter((r) => r.result === 'locked' && r.lockedNow).length, 1, 'exactly one attempt locks');
  t.equal(results.filter((r) => r.result === 'locked' && !r.lockedNow).length, 37);
});
