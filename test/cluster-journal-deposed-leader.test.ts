// A sessions journal's writer is not told "nothing changed" by a stream leader that was deposed without knowing it.
// Cut from its peers, a NATS server that led the journal's stream goes on believing it leads for 10-20 s (its lost
// quorum check), while the other two elect a new leader within 4-9 s and acknowledge writes. A writer attached to
// the old leader asked it for its subject's last sequence (a fence from the new owner of a partition lands there)
// and got the old answer: it kept the partition and answered from the steps it held, one behind (in
// test/cluster-partitions' meta-cut, a session's last PIN answered "That email address is not valid": its '00'
// step was answered, likely, from a copy that lacked it). A read now confirms with an append, which only a quorum
// acknowledges.
import t from 'tap';
import { connectCluster, type ClusterConnection } from '../dist/src/cluster/connection.js';
import { PartitionJournal } from '../dist/src/cluster/journal/journal.js';
import { startNatsCluster } from '../dist/src/tools/local-nats-cluster.js';
import { until } from './helpers/cluster-nodes.js';
import { ensureNatsServer } from './helpers/nats-cluster.js';
import { createNet } from './helpers/netns.js';

t.setTimeout(120_000);

const PREFIX = 'deposed';
const net = createNet(t, 3);
const nats = await startNatsCluster({ binary: ensureNatsServer(), hosts: net.hosts, name: 'deposed' });
t.teardown(() => nats.stop());
await nats.waitForMetaLeader();

const connect = async (urls: string[], name: string, apiTimeoutMs?: number): Promise<ClusterConnection> => {
  const connection = await connectCluster({ NATS_URL: urls, NATS_PREFIX: PREFIX }, name, { apiTimeoutMs });
  t.teardown(() => connection.close().catch(() => {}));
  return connection;
};
const options = { name: 'sessions', maxAgeMs: 600_000, partitionOf: () => 0 };
const STREAM = `${PREFIX}_journal_sessions`;

t.test('a writer on a deposed stream leader does not read what it held as current', async (t) => {
  const setup = await connect(nats.urls.split(','), 'deposed-setup');
  await PartitionJournal.open<string>(setup, options);
  const leaderName = (await setup.jsm.streams.info(STREAM)).cluster!.leader!;
  const old = nats.servers.findIndex((server) => server.name === leaderName);
  const others = [0, 1, 2].filter((i) => i !== old);
  // One writer reaches only the stream's leader, the other only the two servers about to elect a new one.
  const onOld = await connect([nats.servers[old].url], 'deposed-on-the-old-leader', 1_000);
  const onMajority = await connect(
    others.map((i) => nats.servers[i].url),
    'deposed-on-the-majority',
  );
  const a = await PartitionJournal.open<string>(onOld, options);
  const b = await PartitionJournal.open<string>(onMajority, options);
  t.equal(await a.read('session'), undefined, 'a new session: nothing to read');
  const first = await a.append('session', 'step 1', 0);

  for (const other of others) net.block(old, other), net.block(other, old);
  t.teardown(() => net.healAll());
  const elected = await until(
    'the majority to elect a new stream leader',
    async () => {
      const info = await onMajority.jsm.streams.info(STREAM);
      const now = info.cluster?.leader;
      return now && now !== leaderName ? now : undefined;
    },
    30_000,
  );
  const moved = await b.read('session');
  t.equal(moved?.revision, first, `${elected} leads: the partition's new writer reads step 1`);
  const second = await b.append('session', 'step 2', first);
  // The old leader still believes it leads (it answers for the stream): what the test is about.
  const stale = await onOld.jsm.streams.info(STREAM).then(
    (info) => info.cluster?.leader,
    () => undefined,
  );
  t.comment(`step 2 acknowledged at ${second}; ${leaderName}, cut off, names ${stale ?? 'no'} leader`);

  const read = await a.read('session').then(
    (held) => `revision ${held?.revision}`,
    (error: Error) => `refused: ${error.message}`,
  );
  t.not(read, `revision ${first}`, `the old writer does not read step 1 as the newest (${read})`);
  net.healAll();
  const after = await until('the old writer to read again', () => a.read('session'), 60_000);
  t.equal(after.revision, second, 'healed, the old writer reads step 2');
  t.equal(after.value, 'step 2', 'its value');
});
