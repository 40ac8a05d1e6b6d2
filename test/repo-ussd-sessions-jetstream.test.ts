// The UssdSessionRepository contract (the same suite LMDB passes) against JetStream KV on a real 3-server cluster.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { JetStreamUssdSessionRepository } from '../dist/src/cluster/repositories/ussd-sessions.js';
import { ussdSessionRepositoryContract } from './contracts/ussd-sessions.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t);
const connection = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'repo' }, 'repo-ussd-sessions');
t.teardown(() => connection.nc.close());

let buckets = 0;
// A fresh bucket per case: the contract wants an empty repository each time.
ussdSessionRepositoryContract(t, async () => JetStreamUssdSessionRepository.open(connection, { bucket: `sessions_${++buckets}` }));
