// The CustomerRepository contract against JetStream KV on a real 3-server NATS cluster (one cluster for the file),
// and what only a cluster can show: nodes on different servers racing on one ID, one creation key, one PIN counter.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { isRevisionConflict } from '../dist/src/store/revision.js';
import { CustomerAccounts } from '../dist/src/ussd/actor/customer-accounts.js';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { JetStreamCustomerRepository, type CreationBinding } from '../dist/src/cluster/records/ussd/customers.js';
import type { CustomerRecord } from '../dist/src/ussd/customers/repository.js';
import { customerRepositoryContract } from './contracts/customers.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { connectTo, freshDeployment } from './helpers/nats-repositories.js';

const nats = await startTestNatsCluster(t);
const everywhere = await connectTo(t, nats);
/** One connection per NATS server: three nodes, each talking to its own server. */
const perServer = await Promise.all(nats.servers.map((server, i) => connectTo(t, nats, [server.url], `node-${i}`)));

// The tests share nothing but the cluster (each its own deployment) and mostly wait on JetStream (bucket creation,
// quorum writes): three run at a time.
t.jobs = 3;
customerRepositoryContract(t, async () => JetStreamCustomerRepository.open(freshDeployment(everywhere)[0]));

/** One new deployment opened by three nodes: the first creates the buckets (nats-server 2.9 may leave concurrent creates unanswered). */
async function threeNodes() {
  const [first, ...others] = freshDeployment(...perServer);
  const opened = await JetStreamCustomerRepository.open(first);
  return [opened, ...(await Promise.all(others.map((connection) => JetStreamCustomerRepository.open(connection))))];
}

function account(customerId: string, fields: Partial<CustomerRecord> = {}): CustomerRecord {
  return {
    customerId,
    fullName: 'Amina Otieno',
    phoneNumber: '+254712345678',
    pin: 'v1.sealed',
    failedPinAttempts: 0,
    createdAt: 0,
    ...fields,
  };
}

t.test('three nodes creating one customer ID at once: one account, the others are told the ID is taken', async (t) => {
  const nodes = await threeNodes();
  for (let round = 0; round < 10; round++) {
    const id = `C0000001${round}`;
    const outcomes = await Promise.all(nodes.map((node, i) => node.create(account(id, { fullName: `node ${i}` }))));
    const created = outcomes.flatMap((outcome, i) => (outcome.outcome === 'created' ? [i] : []));
    t.equal(created.length, 1, `round ${round}: one creator`);
    t.ok(outcomes.every((o) => o.outcome === 'created' || o.outcome === 'id-taken'));
    t.equal(
      (await nodes[(round + 1) % 3].get(id))?.value.fullName,
      `node ${created[0]}`,
      "every node reads the creator's account",
    );
  }
});

t.test(
  'one creation key sent through three nodes at once (a gateway retry), each with its own new ID: one account',
  async (t) => {
    const nodes = await threeNodes();
    for (let round = 0; round < 10; round++) {
      const ids = nodes.map((_, i) => `C00000${round}${i}0`);
      const outcomes = await Promise.all(
        nodes.map((node, i) => node.create(account(ids[i]), `session-${round}|12|digest`)),
      );
      const customers = outcomes.map((o) => (o.outcome === 'id-taken' ? undefined : o.customer.value.customerId));
      t.equal(new Set(customers).size, 1, `round ${round}: every attempt answers the same account`);
      t.equal(outcomes.filter((o) => o.outcome === 'created').length, 1, 'one of them created it');
      const stored = await Promise.all(ids.map((id) => nodes[0].get(id)));
      t.equal(stored.filter(Boolean).length, 1, 'the other attempts left no account behind');
    }
  },
);

t.test('wrong PINs checked on three nodes at once: every attempt is counted, none is lost', async (t) => {
  const cipher = new PinCipher(randomBytes(32));
  const nodes = (await threeNodes()).map(
    (repository) => new CustomerAccounts(repository, cipher, { pinLockMinutes: 30, maxPinAttempts: 100 }),
  );
  const customer = await nodes[0].create({ fullName: 'Amina Otieno', phoneNumber: '+254712345678', pin: '1234' }, 0);
  const checks = await Promise.all(
    Array.from({ length: 12 }, (_, i) => nodes[i % 3].verifyPin(customer.customerId, '9999', 0)),
  );
  t.ok(checks.every((check) => check.result === 'wrong'));
  const left = checks.map((check) => (check.result === 'wrong' ? check.attemptsLeft : -1)).sort((a, b) => a - b);
  t.same(
    left,
    Array.from({ length: 12 }, (_, i) => 88 + i),
    'each check saw a different count',
  );
  t.equal((await nodes[1].get(customer.customerId))?.failedPinAttempts, 12);
});

t.test('a record store conflict comes out as the repository conflict', async (t) => {
  const repository = await JetStreamCustomerRepository.open(freshDeployment(everywhere)[0]);
  await repository.create(account('C000000AA'));
  const read = (await repository.get('C000000AA'))!;
  await repository.update(account('C000000AA', { failedPinAttempts: 1 }), read.revision);
  const error = await repository
    .update(account('C000000AA', { failedPinAttempts: 2 }), read.revision)
    .catch((e: unknown) => e);
  t.ok(isRevisionConflict(error), 'RevisionConflictError, the type the LMDB repository throws');
});

t.test(
  'a node that died after binding the creation key: the retry through another node makes that account, once',
  async (t) => {
    const [connection] = freshDeployment(everywhere);
    const repository = await JetStreamCustomerRepository.open(connection);
    const creations = await KvRecordStore.open<CreationBinding>(connection, { name: 'ussd_account_creations' });
    const first = account('C00000B01', { email: undefined, pin: 'v1.first' });
    await creations.create(['session-9|12|digest'], { pending: first });

    const retry = await repository.create(account('C00000B02', { pin: 'v1.retry' }), 'session-9|12|digest');
    t.equal(retry.outcome, 'existing', "the retry answers the first attempt's account");
    t.same(
      retry.outcome === 'existing' && retry.customer.value,
      account('C00000B01', { pin: 'v1.first' }),
      'with its ID and its PIN',
    );
    t.equal(await repository.get('C00000B02'), undefined, "the retry's own record is not written");
    t.same((await creations.get(['session-9|12|digest']))?.value, { customerId: 'C00000B01' }, 'the key is confirmed');
  },
);

t.test('a node that died after creating the account, before confirming: the retry answers that account', async (t) => {
  const [connection] = freshDeployment(everywhere);
  const repository = await JetStreamCustomerRepository.open(connection);
  const creations = await KvRecordStore.open<CreationBinding>(connection, { name: 'ussd_account_creations' });
  const first = account('C00000B01');
  await creations.create(['key'], { pending: first });
  t.equal((await repository.create(first)).outcome, 'created', 'the account as step 2 writes it');

  const retry = await repository.create(account('C00000B02'), 'key');
  t.same(retry.outcome === 'existing' && retry.customer.value, first);
  t.equal(await repository.get('C00000B02'), undefined);
});

t.test(
  "a pending key whose ID another account took meanwhile is dropped, and the retry's own account is made",
  async (t) => {
    const [connection] = freshDeployment(everywhere);
    const repository = await JetStreamCustomerRepository.open(connection);
    const creations = await KvRecordStore.open<CreationBinding>(connection, { name: 'ussd_account_creations' });
    await creations.create(['key'], { pending: account('C00000B01') });
    await repository.create(account('C00000B01', { fullName: 'Someone Else', phoneNumber: '+254700000009' }));

    const retry = await repository.create(account('C00000B02'), 'key');
    t.equal(retry.outcome, 'created');
    t.equal((await repository.get('C00000B01'))?.value.fullName, 'Someone Else', 'the other account is untouched');
    t.same((await creations.get(['key']))?.value, { customerId: 'C00000B02' });
  },
);
