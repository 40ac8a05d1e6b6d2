// The CustomerRepository contract (the same suite LMDB passes) against JetStream KV on a real 3-server cluster.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { JetStreamCustomerRepository } from '../dist/src/cluster/repositories/ussd-customers.js';
import { customerRepositoryContract } from './contracts/customers.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t);
const connection = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'repo' }, 'repo-customers');
t.teardown(() => connection.nc.close());

let buckets = 0;
// A fresh bucket per case: the contract wants an empty repository each time.
customerRepositoryContract(t, async () => JetStreamCustomerRepository.open(connection, `customers_${++buckets}`));

t.test('cluster: one creation key retried through three servers at once makes one account', async (t) => {
  const others = await Promise.all(
    nats.servers.map((server, i) => connectCluster({ NATS_URL: [server.url], NATS_PREFIX: 'repo' }, `retry-${i}`)),
  );
  t.teardown(() => Promise.all(others.map((c) => c.nc.close())));
  const repositories = await Promise.all(others.map((c) => JetStreamCustomerRepository.open(c, 'customers_retry')));
  for (let round = 0; round < 5; round++) {
    const key = `session-${round}|3|digest`;
    const ids = [0, 1, 2].map((i) => `C${String(round * 10 + i).padStart(8, '0')}`);
    const outcomes = await Promise.all(
      repositories.map((repository, i) =>
        repository.create({ customerId: ids[i], fullName: 'Amina', phoneNumber: '+254712345678', pin: 'v1.sealed', failedPinAttempts: 0, createdAt: 0 }, key),
      ),
    );
    const answered = new Set(outcomes.map((o) => (o.outcome === 'id-taken' ? 'id-taken' : o.customer.value.customerId)));
    t.equal(answered.size, 1, `round ${round}: every attempt answers the same account`);
    const stored = (await Promise.all(ids.map((id) => repositories[0].get(id)))).filter(Boolean);
    t.equal(stored.length, 1, 'and only that account exists');
  }
});
