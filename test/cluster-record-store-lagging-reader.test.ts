// KvRecordStore.all returns every write acknowledged before it, even through a reader on a server still catching
// up. Readers are R1 ordered consumers, which nats-server places on any of the stream's servers; on one back from a
// pause or a partition, a reader delivers that server's state (records acknowledged meanwhile missing, older
// versions of others) and counts 0 pending at that server's last message. `all` used to stop there, so a user's
// session list could miss a session just created, or show a stale or deleted one, after a partition healed.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { laggingFollower, startTestNatsCluster, whilePaused } from './helpers/nats-cluster.js';

t.setTimeout(120_000);
const nats = await startTestNatsCluster(t);
const meta = await nats.waitForMetaLeader();

interface Row {
  n: number;
  v: number;
}

t.test('a listing through a lagging server holds exactly what was acknowledged before it', async (t) => {
  const setup = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'lagkv' }, 'lagkv-setup');
  await KvRecordStore.open<Row>(setup, { name: 'index' });
  const stream = 'KV_lagkv_index';
  const leader = (await setup.jsm.streams.info(stream)).cluster!.leader!;
  await setup.close();
  const { lagging, leaderUrl } = laggingFollower(nats, meta, leader);
  const connection = await connectCluster({ NATS_URL: [leaderUrl], NATS_PREFIX: 'lagkv' }, 'lagkv-reader');
  t.teardown(() => connection.close());
  const store = await KvRecordStore.open<Row>(connection, { name: 'index' });

  const prefix = ['u', 'did:key:alice'];
  /** What the bucket holds under `prefix` as acknowledged: key name -> value and revision. */
  const expected = new Map<string, { value: Row; revision: number }>();
  const put = async (n: number, v: number) =>
    expected.set(`s${n}`, { value: { n, v }, revision: await store.put([...prefix, `s${n}`], { n, v }) });
  const inBatches = async (count: number, write: (i: number) => Promise<unknown>) => {
    for (let done = 0; done < count; done += 200)
      await Promise.all(Array.from({ length: Math.min(200, count - done) }, (_, i) => write(done + i)));
  };

  // Before the pause: 300 records under the prefix, and some of another user's.
  await inBatches(300, (i) => put(i, 0));
  await inBatches(50, (i) => store.put(['u', 'did:key:bob', `s${i}`], { n: i, v: 0 }));

  // Paused while the other two acknowledge many writes (another user's, then changes under the prefix: 200 new
  // records, 100 updated, 50 deleted), then resumed: it catches up over the next seconds, the prefix's changes last.
  const started = Date.now();
  await whilePaused([lagging], async () => {
    await inBatches(6_000, (i) => store.put(['u', 'did:key:bob', `b${i}`], { n: i, v: 1 }));
    await inBatches(200, (i) => put(300 + i, 1));
    await inBatches(100, (i) => put(i, 2));
    await inBatches(50, async (i) => {
      await store.delete([...prefix, `s${100 + i}`]);
      expected.delete(`s${100 + i}`);
    });
  });
  t.comment(`writes while paused: ${Date.now() - started} ms`);
  t.equal(expected.size, 450, 'acknowledged under the prefix: 300 + 200 new - 50 deleted');

  // Each listing makes a reader of its own, placed anew: some land on the lagging server while it is behind.
  const readStarted = Date.now();
  const listings = await Promise.all(Array.from({ length: 15 }, () => store.all(prefix)));
  t.comment(`15 listings: ${Date.now() - readStarted} ms`);
  listings.forEach((records, i) => {
    const got = new Map(records.map((record) => [record.key.join('/'), record]));
    const under = (name: string) => [...prefix, name].join('/');
    const missing = [...expected.keys()].filter((name) => !got.has(under(name))).length;
    const stale = [...expected].filter(([name, { value, revision }]) => {
      const record = got.get(under(name));
      return record && (record.revision !== revision || JSON.stringify(record.value) !== JSON.stringify(value));
    }).length;
    const extra = records.filter((record) => !expected.has(record.key[2]) || record.key[1] !== prefix[1]).length;
    t.same(
      { records: records.length, missing, stale, extra },
      { records: 450, missing: 0, stale: 0, extra: 0 },
      `listing ${i}`,
    );
  });

  // The readers are still there (5 minutes of inactivity): those of the listings on the lagging server (at least:
  // the consumer list leaves out any whose server is slow to answer).
  let onLagging = 0;
  for await (const info of await connection.jsm.consumers.list(stream)) {
    if (info.cluster?.leader === lagging.name) onLagging++;
  }
  t.comment(`readers on the lagging server (${lagging.name}): ${onLagging}`);
  t.ok(onLagging > 0, 'some listings read through the lagging server');
});
