// Nothing is read as "the stream's last sequence" from a NATS server that lost its stream's leader. Such a server
// answers STREAM.INFO with its own state, and after a partition that state lacks the writes acknowledged while it
// was cut off. Two readers relied on it:
// - the revocation check waits until this node's copy of the revocations reaches the bucket's last sequence; a node
//   attached to such a server counted a revocation made meanwhile as not there, and let the revoked delegation in.
//   The sequence now comes from STREAM.MSG.GET, which only the leader answers: the check fails (the front door
//   answers 503) until a leader is back, and then refuses the delegation;
// - the sessions journal reads its stream up to the last sequence before a partition's load or a listing: a stale
//   one would load sessions without their newest steps. An answer without a leader now fails as a timeout.
import t from 'tap';
import { connectCluster, type ClusterConnection } from '../dist/src/cluster/connection.js';
import { journalState, openJournalStream } from '../dist/src/cluster/journal/stream.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { JetStreamRevocationRepository } from '../dist/src/cluster/records/oracle/revocations.js';
import type { Revocation } from '../dist/src/oracle/identity/revocations.js';
import { startTestNatsCluster, whilePaused } from './helpers/nats-cluster.js';

t.setTimeout(180_000);
const nats = await startTestNatsCluster(t);
await nats.waitForMetaLeader();

const PREFIX = 'leaderless';
const REVOCATIONS = `KV_${PREFIX}_oracle_revocations`;
const connect = async (urls: string[], name: string): Promise<ClusterConnection> => {
  const connection = await connectCluster({ NATS_URL: urls, NATS_PREFIX: PREFIX }, name);
  t.teardown(() => connection.close().catch(() => {}));
  return connection;
};

/** The consumers on the stream, by name, with the server each runs on. */
async function consumers(connection: ClusterConnection, stream: string): Promise<Map<string, string | undefined>> {
  const found = new Map<string, string | undefined>();
  for await (const info of await connection.jsm.consumers.list(stream)) found.set(info.name, info.cluster?.leader);
  return found;
}

/** STREAM.INFO through `connection` until a server without a leader answers it: that server's last sequence. */
async function leaderlessLastSeq(connection: ClusterConnection, stream: string): Promise<number | undefined> {
  for (const started = Date.now(); Date.now() - started < 60_000; ) {
    const info = await connection.jsm.streams.info(stream).catch(() => undefined);
    if (info && !info.cluster?.leader) return info.state.last_seq;
  }
  return undefined;
}

t.test('a server without its stream leader is not trusted for the last sequence', async (t) => {
  const setup = await connect(nats.urls.split(','), 'leaderless-setup');
  const writer = await JetStreamRevocationRepository.open(setup);
  t.teardown(() => writer.close());
  await writer.revoke('before-the-partition');
  const journal = await openJournalStream(setup, { name: 'sessions', maxAgeMs: 600_000 });
  await setup.js.publish(`${journal.base}.writer-a`, '{"o":1}');
  const leaders = await Promise.all(
    [REVOCATIONS, journal.name].map(async (stream) => (await setup.jsm.streams.info(stream)).cluster!.leader!),
  );
  // The server to cut off leads neither stream (with three servers, one always does not), so writes go on without it.
  const cutOff = nats.servers.find((server) => !leaders.includes(server.name))!;
  const majority = nats.servers.filter((server) => server !== cutOff);

  // A node attached to the server about to be cut off, whose copy of the revocations is read on that server: its
  // watch's consumer placed there (consumers are placed on any of the stream's servers; a few tries find one).
  const node = await connect([cutOff.url], 'leaderless-node');
  let checker: JetStreamRevocationRepository | undefined;
  for (let tries = 0; tries < 20 && !checker; tries++) {
    const before = await consumers(setup, REVOCATIONS);
    const candidate = await JetStreamRevocationRepository.open(node);
    t.equal(await candidate.isRevoked('before-the-partition'), true, 'a check before the partition');
    const placed = [...(await consumers(setup, REVOCATIONS))].find(([name]) => !before.has(name));
    if (placed?.[1] === cutOff.name) checker = candidate;
    else candidate.close();
  }
  if (!checker) throw new Error(`no watch consumer was placed on ${cutOff.name} in 20 tries`);
  t.teardown(() => checker.close());
  const nodeJournal = { ...journal, connection: node };

  // Cut off (paused) while the majority acknowledges more than the server's socket buffers hold, and then the
  // revocation; then the majority goes (paused) and the cut-off server comes back alone, without a leader.
  const writes = await connect(
    majority.map((server) => server.url),
    'leaderless-writes',
  );
  const filler = await KvRecordStore.open<Revocation & { pad: string }>(writes, { name: 'oracle_revocations' });
  const pad = 'x'.repeat(8_000);
  let revokedAt = 0;
  let appendedThrough = 0;
  await whilePaused([cutOff], async () => {
    for (let batch = 0; batch < 6; batch++)
      await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          await filler.put([`filler-${i}`], { until: null, revokedAt: new Date().toISOString(), pad });
          const ack = await writes.js.publish(`${journal.base}.writer-a`, JSON.stringify({ r: [[i, 'k', pad]] }));
          appendedThrough = Math.max(appendedThrough, ack.seq);
        }),
      );
    revokedAt = await filler.put(['revoked-meanwhile'], { until: null, revokedAt: new Date().toISOString(), pad });
  });
  await whilePaused(majority, async () => {
    // Nothing answers for the first seconds; then the server without a leader answers STREAM.INFO itself.
    const started = Date.now();
    const stale = await leaderlessLastSeq(node, REVOCATIONS);
    t.comment(`STREAM.INFO from the server without a leader after ${Date.now() - started} ms: last_seq ${stale}`);
    t.ok(stale !== undefined && stale < revokedAt, `it answers with its own state, before the revocation`);

    const checks = await Promise.allSettled(Array.from({ length: 3 }, () => checker.isRevoked('revoked-meanwhile')));
    t.same(
      checks.map((check) => (check.status === 'fulfilled' ? `answered ${check.value}` : 'failed')),
      ['failed', 'failed', 'failed'],
      'checks made meanwhile fail (503 at the front door); none counts the revocation as not there',
    );

    const staleJournal = await leaderlessLastSeq(node, journal.name);
    t.ok(staleJournal !== undefined && staleJournal < appendedThrough, 'the journal too: its own, older state');
    const state = await journalState(nodeJournal).then(
      (answered) => `answered lastSeq ${answered.lastSeq} of ${appendedThrough}`,
      (error: Error & { code?: string }) => `${error.name} ${error.code}`,
    );
    t.equal(state, 'TransientError cluster_unreachable', "the journal's state is not read from it (out of reach)");
  });

  // With a leader again, the same node refuses the delegation and reads the journal whole.
  const started = Date.now();
  let revoked: boolean | undefined;
  while (revoked === undefined && Date.now() - started < 60_000)
    revoked = await checker.isRevoked('revoked-meanwhile').catch(() => undefined);
  t.equal(revoked, true, `refused once a leader is back (${Date.now() - started} ms)`);
  let lastSeq: number | undefined;
  while (lastSeq === undefined && Date.now() - started < 60_000)
    lastSeq = await journalState(nodeJournal).then(
      (answered) => answered.lastSeq,
      () => undefined,
    );
  t.equal(lastSeq, appendedThrough, "the journal's state once a leader is back");
});
