// A journal read reaches the end it was asked for even when its reader sits on a server still catching up. Readers
// are R1 ordered consumers, which nats-server places on any of the stream's servers; on one back from a pause or a
// partition, a reader counts 0 pending at that server's last message, far short of the leader's. Reads used to stop
// there, and a partition's load (catchUp) marked the rest read: records acknowledged meanwhile were never held, and a
// session's next step answered "END Your session has expired" (seen in test/cluster-partitions, server-split).
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { encodeMessage, openJournalStream, readJournal } from '../dist/src/cluster/journal/stream.js';
import { laggingFollower, startTestNatsCluster, whilePaused } from './helpers/nats-cluster.js';

t.setTimeout(120_000);
const nats = await startTestNatsCluster(t);
const meta = await nats.waitForMetaLeader();

t.test('reads through a lagging server still deliver every message up to the end asked for', async (t) => {
  const setup = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'lag' }, 'lag-setup');
  const stream = await openJournalStream(setup, { name: 'lag', maxAgeMs: 3_600_000 });
  await setup.js.publish(`${stream.base}.w`, encodeMessage({ o: 1 }));
  const leader = (await setup.jsm.streams.info(stream.name)).cluster!.leader!;
  await setup.close();
  const { lagging, leaderUrl } = laggingFollower(nats, meta, leader);
  const connection = await connectCluster({ NATS_URL: [leaderUrl], NATS_PREFIX: 'lag' }, 'lag-reader');
  t.teardown(() => connection.close());
  const journal = { ...stream, connection };

  // Paused while the other two acknowledge many messages, then resumed: it catches up over the next seconds.
  const records = 20_000;
  await whilePaused([lagging], async () => {
    for (let sent = 0; sent < records; sent += 200)
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          connection.js.publish(`${stream.base}.w`, encodeMessage({ r: [[0, `k${sent + i}`, sent + i]] })),
        ),
      );
  });
  const { state } = await connection.jsm.streams.info(stream.name);

  // Each read makes a reader of its own: some land on the lagging server while it is behind.
  const delivered: number[] = [];
  for (let read = 0; read < 6; read++) {
    let last = 0;
    let count = 0;
    await readJournal(journal, { from: 1, to: state.last_seq }, (message) => {
      count++;
      last = message.seq;
    });
    delivered.push(count);
    t.equal(last, state.last_seq, `read ${read}: through the last message`);
  }
  t.same(
    delivered,
    delivered.map(() => state.last_seq),
    `every read delivered all ${state.last_seq} messages`,
  );
});
