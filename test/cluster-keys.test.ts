// The key commands in cluster mode, on one real NATS server: npm run rotate-pin-key refuses while a node serves,
// moves every PIN in JetStream (accounts and pending account creations) to the new key through a kill -9 and a
// resumed run, after which every account logs in with the new key and a node with the old key exits 78 naming it;
// a rotation's rewrite loses no concurrent write to the account; npm run adopt-oracle-key forgets the oracle key the
// records were started with, refusing while a node serves. Each test is its own deployment (NATS_PREFIX).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectCluster, type ClusterConnection } from '../dist/src/cluster/connection.js';
import { JetStreamKeyChecks } from '../dist/src/cluster/key-checks.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';
import { JetStreamCustomerRepository } from '../dist/src/cluster/records/ussd/customers.js';
import type { CustomerRecord } from '../dist/src/ussd/customers/repository.js';
import { PIN_CHECK, PIN_ROTATION } from '../dist/src/ussd/pin-key-check.js';
import { rotatePinKey } from '../dist/src/ussd/pin-rotation.js';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { logIn } from './helpers/ussd-gateway.js';

t.setTimeout(240_000);
// The tests share only the NATS server (each is its own deployment) and spend their time starting processes and
// waiting on NATS: they run side by side.
t.jobs = 3;
const ROOT = join(import.meta.dirname, '..');
const hexKey = () => randomBytes(32).toString('hex');
const nats = await startTestNatsCluster(t, 1);
let deployments = 0;

/** A new deployment on the file's NATS server, and a connection to it closed when `t` ends. */
async function deployment(t: Test): Promise<{ prefix: string; connection: ClusterConnection }> {
  const prefix = `keys${++deployments}${randomBytes(2).toString('hex')}`;
  const connection = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: prefix }, 'keys-test');
  t.teardown(() => connection.close());
  return { prefix, connection };
}

/** `node <args>` in ROOT on the deployment; resolves with its exit and output (`onLine` sees stdout lines). */
function runNode(
  t: Test,
  args: string[],
  env: Record<string, string>,
  onLine?: (line: string, kill: () => void) => void,
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-cluster-keys-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      NATS_URL: nats.urls,
      NATS_MONITOR_URL: nats.monitorUrls,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const line of chunk.split('\n')) if (line) onLine?.(line, () => child.kill('SIGKILL'));
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // Every run here ends by itself (a refusal, a finished command): one that would not fails instead of hanging.
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  child.once('exit', () => clearTimeout(timer));
  return new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

const customerId = (i: number) => `C${(0x20000000 + i).toString(16).toUpperCase()}`;
const account = (id: string, pin: string): CustomerRecord => ({
  customerId: id,
  fullName: `Customer ${id}`,
  phoneNumber: '+254700000001',
  pin,
  failedPinAttempts: 0,
  createdAt: Date.now(),
});

/** How many stored PINs (accounts and pending creations) open with each key, and the key-check records. */
async function census(connection: ClusterConnection, keys: Record<string, string>) {
  const ciphers = Object.entries(keys).map(([name, key]) => [name, new PinCipher(Buffer.from(key, 'hex'))] as const);
  const counts: Record<string, number> = Object.fromEntries(Object.keys(keys).map((name) => [name, 0]));
  const count = (pin: string, id: string) => {
    for (const [name, cipher] of ciphers) if (cipher.opens(pin, id)) counts[name]++;
  };
  const repository = await JetStreamCustomerRepository.open(connection);
  let after: string | undefined;
  do {
    const page = await repository.page(after, 1000);
    for (const { value } of page.records) count(value.pin, value.customerId);
    after = page.next;
  } while (after !== undefined);
  do {
    const page = await repository.pendingCreations(after, 1000);
    for (const { pending } of page.records) count(pending.pin, pending.customerId);
    after = page.next;
  } while (after !== undefined);
  const checks = await JetStreamKeyChecks.open(connection);
  return { counts, rotation: await checks.get(PIN_ROTATION), check: await checks.get(PIN_CHECK) };
}

t.test('rotate-pin-key in cluster mode: refused while a node serves; kill -9, resumed, new key only', async (t) => {
  const { prefix, connection } = await deployment(t);
  const [a, b] = [hexKey(), hexKey()];
  const oracle = formatKey(await generateKey());
  const env = { NATS_PREFIX: prefix, RATE_LIMIT_MAX: '100000' };
  const first = await startTestNodes(t, nats, {
    count: 1,
    keys: { PIN_ENCRYPTION_KEY: a, ORACLE_PRIVATE_KEY: oracle },
    env,
  });

  // Accounts as the nodes write them (the JetStream repository), and two creates a node died in: one bound and its
  // account written (step 2), one only bound (step 1). Their retries must still find the same account afterwards.
  const repository = await JetStreamCustomerRepository.open(connection);
  const old = new PinCipher(Buffer.from(a, 'hex'));
  const ids = Array.from({ length: 120 }, (_, i) => customerId(i));
  await Promise.all(ids.map((id) => repository.create(account(id, old.encrypt('12345', id)))));
  const creations = await KvRecordStore.open<{ pending: CustomerRecord }>(connection, {
    name: 'ussd_account_creations',
  });
  const halfMade = account(customerId(900), old.encrypt('24680', customerId(900)));
  await creations.create(['key-half-made'], { pending: halfMade });
  await repository.create(halfMade);
  const bound = account(customerId(901), old.encrypt('13579', customerId(901)));
  await creations.create(['key-bound'], { pending: bound });

  const rotate = (extra: Record<string, string> = {}, onLine?: Parameters<typeof runNode>[3]) =>
    runNode(
      t,
      ['dist/src/tools/keys.js', 'rotate-pin-key', '--page-size', extra.PAGE ?? '500'],
      { ...env, PIN_ENCRYPTION_KEY: a, ORACLE_PRIVATE_KEY: oracle, NEW_PIN_ENCRYPTION_KEY: b, ...extra },
      onLine,
    );
  const serving = await rotate();
  t.equal(serving.code, 78, 'refused while a node serves');
  t.match(serving.stderr, /nodes serve the deployment .*: node-1 renewed their lease just now; stop every node first/);
  t.equal((await census(connection, { a })).rotation, undefined, 'and nothing recorded');
  await first.stop();

  // A real kill -9 from outside once the first pages are written (a page per account: over a hundred to go).
  const killed = await rotate({ PAGE: '1' }, (line, kill) => /^rewritten \d+ PINs/.test(line) && kill());
  t.equal(killed.signal, 'SIGKILL', 'killed mid-rotation');
  const midway = await census(connection, { a, b });
  t.ok(midway.counts.a > 0 && midway.counts.b > 0, `PINs under both keys: ${JSON.stringify(midway.counts)}`);
  t.equal(midway.counts.a + midway.counts.b, ids.length + 3, 'every PIN opens with one of them');
  t.ok(midway.rotation, 'the rotation is recorded as unfinished');
  const during = await runNode(t, ['dist/src/app/main.js'], {
    ...env,
    PIN_ENCRYPTION_KEY: b,
    ORACLE_PRIVATE_KEY: oracle,
  });
  t.equal(during.code, 78, 'no node starts meanwhile');
  t.match(during.stderr, /^PIN_ENCRYPTION_KEY: a PIN key rotation of the cluster's JetStream is unfinished/);

  const done = await rotate();
  t.equal(done.code, 0, done.stderr);
  t.match(done.stdout, /done: \d+ PINs encrypted under the new key .* then start every node with it/);
  const after = await census(connection, { a, b });
  t.same([after.counts, after.rotation], [{ a: 0, b: ids.length + 3 }, undefined], 'every PIN under the new key');

  const oldKey = await runNode(t, ['dist/src/app/main.js'], {
    ...env,
    PIN_ENCRYPTION_KEY: a,
    ORACLE_PRIVATE_KEY: oracle,
  });
  t.equal(oldKey.code, 78, 'the old key exits 78');
  t.match(oldKey.stderr.trim(), /^PIN_ENCRYPTION_KEY: PIN_ENCRYPTION_KEY is not the key the PINs in the cluster's/);

  // The interrupted creates, retried as a node would: the same accounts, PINs under the new key.
  for (const [key, record] of [
    ['key-half-made', halfMade],
    ['key-bound', bound],
  ] as const) {
    const retried = await repository.create(account(customerId(999), 'unused'), key);
    t.ok(
      retried.outcome !== 'id-taken' && retried.customer.value.customerId === record.customerId,
      `${key}: same account`,
    );
  }
  const second = await startTestNodes(t, nats, {
    count: 1,
    keys: { PIN_ENCRYPTION_KEY: b, ORACLE_PRIVATE_KEY: oracle },
    env,
  });
  const url = second.nodes[0].url;
  const logins = [...ids.map((id) => [id, '12345']), [halfMade.customerId, '24680'], [bound.customerId, '13579']];
  for (let i = 0; i < logins.length; i += 8) {
    const screens = await Promise.all(logins.slice(i, i + 8).map(([id, pin]) => logIn(url, id, pin)));
    for (const [j, screen] of screens.entries())
      if (!/^CON Hello Customer/.test(screen)) t.fail(`${logins[i + j][0]} does not log in: ${screen}`);
  }
  t.pass(`all ${logins.length} accounts log in with their PIN under the new key`);
  t.match(await logIn(url, ids[0], '54321'), /^CON Wrong PIN/, 'and a wrong PIN is still wrong');
});

t.test("a rotation's rewrite of an account that moved meanwhile keeps the other write", async (t) => {
  const { connection } = await deployment(t);
  const [a, b] = [hexKey(), hexKey()];
  const keys = {
    current: { key: Buffer.from(a, 'hex'), kind: 'hex' as const },
    next: { key: Buffer.from(b, 'hex'), kind: 'hex' as const },
  };
  const repository = await JetStreamCustomerRepository.open(connection);
  const id = customerId(1);
  await repository.create(account(id, new PinCipher(keys.current.key).encrypt('12345', id)));
  // A login's failed attempt lands between the rotation's read and its write.
  let raced = false;
  const racing = Object.assign(Object.create(repository) as JetStreamCustomerRepository, {
    async update(record: CustomerRecord, expected: number) {
      if (!raced) {
        raced = true;
        const now = (await repository.get(record.customerId))!;
        await repository.update({ ...now.value, failedPinAttempts: 2 }, now.revision);
      }
      return repository.update(record, expected);
    },
  });
  const done = await rotatePinKey(await JetStreamKeyChecks.open(connection), racing, keys, 'the test', {});
  t.equal(done.rewritten, 1);
  const stored = (await repository.get(id))!.value;
  t.equal(stored.failedPinAttempts, 2, 'the concurrent write is kept');
  t.ok(new PinCipher(keys.next.key).matches(stored.pin, '12345', id), 'and the PIN is under the new key');
});

t.test(
  'adopt-oracle-key in cluster mode: refused while a node serves, then the next start records its key',
  async (t) => {
    const { prefix } = await deployment(t);
    const pin = hexKey();
    const [first, second] = [await generateKey(), await generateKey()];
    const env = { NATS_PREFIX: prefix };
    const nodes = await startTestNodes(t, nats, {
      count: 1,
      keys: { PIN_ENCRYPTION_KEY: pin, ORACLE_PRIVATE_KEY: formatKey(first) },
      env,
    });
    // The command reads the nodes' environment, keys included (cluster mode requires them); the new key may be set.
    const adopt = () =>
      runNode(t, ['dist/src/tools/keys.js', 'adopt-oracle-key'], {
        ...env,
        PIN_ENCRYPTION_KEY: pin,
        ORACLE_PRIVATE_KEY: formatKey(second),
      });
    const serving = await adopt();
    t.equal(serving.code, 78, 'refused while a node serves');
    t.match(serving.stderr, /node-1 renewed their lease just now; stop every node first .*; nothing was changed/);
    await nodes.stop();

    const changed = await runNode(t, ['dist/src/app/main.js'], {
      ...env,
      PIN_ENCRYPTION_KEY: pin,
      ORACLE_PRIVATE_KEY: formatKey(second),
    });
    t.equal(changed.code, 78, 'another oracle key is refused');
    t.match(changed.stderr, new RegExp(`^ORACLE_PRIVATE_KEY: .* was started with the oracle key ${first.did()}`));
    const adopted = await adopt();
    t.equal(adopted.code, 0, adopted.stderr);
    t.match(adopted.stdout, new RegExp(`forgot the oracle key ${first.did()}`));
    await startTestNodes(t, nats, {
      count: 1,
      keys: { PIN_ENCRYPTION_KEY: pin, ORACLE_PRIVATE_KEY: formatKey(second) },
      env,
    });
    const back = await runNode(t, ['dist/src/app/main.js'], {
      ...env,
      PIN_ENCRYPTION_KEY: pin,
      ORACLE_PRIVATE_KEY: formatKey(first),
    });
    t.equal(back.code, 78, 'and from then on the old key is refused');
  },
);
