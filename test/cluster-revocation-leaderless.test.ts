// A revocation check never answers from a NATS server that lost its stream's leader. The check waits until this
// node's copy of the revocations reaches the bucket's last sequence; that sequence used to come from STREAM.INFO,
// which a member without a leader answers with its own state. After a partition such a server lacks the writes
// acknowledged while it was cut off, so a node attached to it counted a revocation made meanwhile as not there: a
// revoked delegation got back in. The sequence now comes from STREAM.MSG.GET, which only the leader answers, so the
// check fails instead (the front door answers 503) until a leader is back, and then refuses the delegation.
import t from 'tap';
import { connectCluster, type ClusterConnection } from '../dist/src/cluster/connection.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { JetStreamRevocationRepository } from '../dist/src/oracle/jetstream-revocations.js';
import type { Revocation } from '../dist/src/oracle/revocations.js';
import { startTestNatsCluster, whilePaused } from './helpers/nats-cluster.js';

t.setTimeout(180_000);
const nats = await startTestNatsCluster(t);
await nats.waitForMetaLeader();

const PREFIX = 'leaderless';
const STREAM = `KV_${PREFIX}_oracle_revocations`;
const connect = async (urls: string[], name: string): Promise<ClusterConnection> => {
  const connection = await connectCluster({ NATS_URL: urls, NATS_PREFIX: PREFIX }, name);
  t.teardown(() => connection.close().catch(() => {}));
  return connection;
};

/** The consumers on the stream, by name, with the server each runs on. */
async function consumers(connection: ClusterConnection): Promise<Map<string, string | undefined>> {
  const found = new Map<string, string | undefined>();
  for await (const info of await connection.jsm.consumers.list(STREAM)) found.set(info.name, info.cluster?.leader);
  return found;
}

t.test(
  'a check through a server without its stream leader refuses to answer, then refuses the delegation',
  async (t) => {
    const setup = await connect(nats.urls.split(','), 'leaderless-setup');
    const writer = await JetStreamRevocationRepository.open(setup);
    t.teardown(() => writer.close());
    await writer.revoke('before-the-partition');
    const leaderName = (await setup.jsm.streams.info(STREAM)).cluster!.leader!;
    const leader = nats.servers.find((server) => server.name === leaderName)!;
    const cutOff = nats.servers.find((server) => server !== leader)!;
    const majority = nats.servers.filter((server) => server !== cutOff);

    // A node attached to the server about to be cut off, whose copy of the revocations is read on that server: its
    // watch's consumer placed there (consumers are placed on any of the stream's servers; a few tries find one).
    const node = await connect([cutOff.url], 'leaderless-node');
    let checker: JetStreamRevocationRepository | undefined;
    for (let tries = 0; tries < 20 && !checker; tries++) {
      const before = await consumers(setup);
      const candidate = await JetStreamRevocationRepository.open(node);
      t.equal(await candidate.isRevoked('before-the-partition'), true, 'a check before the partition');
      const placed = [...(await consumers(setup))].find(([name]) => !before.has(name));
      if (placed?.[1] === cutOff.name) checker = candidate;
      else candidate.close();
    }
    if (!checker) throw new Error(`no watch consumer was placed on ${cutOff.name} in 20 tries`);
    t.teardown(() => checker.close());

    // Cut off (paused) while the majority acknowledges more than the server's socket buffers hold, and then the
    // revocation; then the majority goes (paused) and the cut-off server comes back alone, without a leader.
    const writes = await connect([leader.url], 'leaderless-writes');
    const filler = await KvRecordStore.open<Revocation & { pad: string }>(writes, { name: 'oracle_revocations' });
    const pad = 'x'.repeat(8_000);
    let revokedAt = 0;
    await whilePaused([cutOff], async () => {
      for (let batch = 0; batch < 6; batch++)
        await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            filler.put([`filler-${i}`], { until: null, revokedAt: new Date().toISOString(), pad }),
          ),
        );
      revokedAt = await filler.put(['revoked-meanwhile'], { until: null, revokedAt: new Date().toISOString(), pad });
    });
    await whilePaused(majority, async () => {
      // Nothing answers for the first seconds; then the server without a leader answers STREAM.INFO itself.
      const started = Date.now();
      let stale: number | undefined;
      while (stale === undefined && Date.now() - started < 60_000) {
        stale = await node.jsm.streams.info(STREAM).then(
          (info) => (info.cluster?.leader ? undefined : info.state.last_seq),
          () => undefined,
        );
      }
      t.comment(`STREAM.INFO from the server without a leader after ${Date.now() - started} ms: last_seq ${stale}`);
      t.ok(stale !== undefined && stale < revokedAt, `it answers with its own state, before the revocation`);

      const checks = await Promise.allSettled(Array.from({ length: 3 }, () => checker.isRevoked('revoked-meanwhile')));
      t.same(
        checks.map((check) => (check.status === 'fulfilled' ? `answered ${check.value}` : 'failed')),
        ['failed', 'failed', 'failed'],
        'checks made meanwhile fail (503 at the front door); none counts the revocation as not there',
      );
    });

    // With a leader again, the same node refuses the delegation.
    const started = Date.now();
    let revoked: boolean | undefined;
    while (revoked === undefined && Date.now() - started < 60_000)
      revoked = await checker.isRevoked('revoked-meanwhile').catch(() => undefined);
    t.equal(revoked, true, `refused once a leader is back (${Date.now() - started} ms)`);
  },
);
