// The UssdSessionRepository contract against the sessions journal on a real 3-server NATS cluster (one cluster for the
// file), and what only the cluster shows: expiry by the stream's max age, steps of many sessions in one fsynced
// append, a live set that sees every node's writes, and writers on different servers that both believe they serve
// one partition (the fence: the newest claim wins, a stale copy is refused).
import t from 'tap';
import type { ClusterConnection } from '../dist/src/cluster/connection.js';
import {
  JournalUssdSessionRepository,
  LiveUssdSessions,
  SESSION_JOURNAL_MARGIN_MS,
} from '../dist/src/cluster/records/ussd/sessions.js';
import { isRevisionConflict } from '../dist/src/store/revision.js';
import { session, T0, ussdSessionRepositoryContract, type UssdSessionsUnderTest } from './contracts/ussd-sessions.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { connectTo, freshDeployment } from './helpers/nats-repositories.js';

const nats = await startTestNatsCluster(t);
const everywhere = await connectTo(t, nats);
const perServer = await Promise.all(nats.servers.map((server, i) => connectTo(t, nats, [server.url], `node-${i}`)));
const FIVE_MINUTES = 300_000;
const streamOf = (connection: ClusterConnection) => `${connection.prefix}_journal_ussd`;
/** Sessions `s-<n>` in partition n % 4 (so a test chooses which sessions share a partition). */
const partitionOf = (sessionId: string) => Number(/(\d+)$/.exec(sessionId)?.[1] ?? 0) % 4;

interface Opened {
  writer: JournalUssdSessionRepository;
  live: LiveUssdSessions;
  /** The writer for get/begin/update and the front door's view for the live set: one node's sessions. */
  repository: UssdSessionsUnderTest;
}

async function open(connection: ClusterConnection, maxLifetimeMs = FIVE_MINUTES, marginMs?: number): Promise<Opened> {
  const writer = await JournalUssdSessionRepository.open(connection, { maxLifetimeMs, marginMs, partitionOf });
  const live = await LiveUssdSessions.open(connection, { maxLifetimeMs, marginMs });
  const repository: UssdSessionsUnderTest = {
    get: (sessionId) => writer.get(sessionId),
    begin: (value, now) => writer.begin(value, now),
    update: (value, read) => writer.update(value, read),
    live: (now) => live.live(now),
    removeExpired: () => live.removeExpired(),
  };
  return { writer, live, repository };
}

// The tests share nothing but the cluster (each its own deployment) and mostly wait on JetStream (bucket creation,
// quorum writes): three run at a time.
t.jobs = 3;
ussdSessionRepositoryContract(t, async () => (await open(freshDeployment(everywhere)[0])).repository);

/** One new deployment opened by three nodes, each on its own NATS server. */
async function threeNodes(): Promise<Opened[]> {
  const [first, ...others] = freshDeployment(...perServer);
  const opened = await open(first);
  return [opened, ...(await Promise.all(others.map((connection) => open(connection))))];
}

const refusal = (write: Promise<unknown>) =>
  write.then(
    () => undefined,
    (error: unknown) => error,
  );

t.test('the stream keeps a record for the longest session life plus a margin, with three replicas', async (t) => {
  const [connection] = freshDeployment(everywhere);
  await open(connection);
  const { config } = await connection.jsm.streams.info(streamOf(connection));
  t.equal(config.max_age, (FIVE_MINUTES + SESSION_JOURNAL_MARGIN_MS) * 1_000_000);
  t.equal(config.num_replicas, 3);
  await open(connection, 2 * FIVE_MINUTES);
  const longer = await connection.jsm.streams.info(streamOf(connection));
  t.equal(
    longer.config.max_age,
    (2 * FIVE_MINUTES + SESSION_JOURNAL_MARGIN_MS) * 1_000_000,
    'a longer session TTL configured later lengthens it',
  );
});

t.test('a session not written for the max age is gone, and its id can begin again', async (t) => {
  // A 1 s max age (500 ms life + 500 ms margin), so the test waits seconds, not the default margin's minute.
  const [connection] = freshDeployment(everywhere);
  const { repository } = await open(connection, 500, 500);
  const now = Date.now();
  await repository.begin(session('s-1', now + 500, { createdAt: now }), now);
  t.ok(await repository.get('s-1'));
  const started = Date.now();
  while ((await repository.get('s-1')) !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(Date.now() - started < 5000, 'dropped within seconds');
  t.same(await repository.live(Date.now()), [], 'and not listed');
  t.type(await repository.begin(session('s-1', Date.now() + 500), Date.now()), 'number', 'the id begins again');
});

t.test('steps of many sessions arriving together go out in few fsynced appends (group commit)', async (t) => {
  const [connection] = freshDeployment(everywhere);
  const { repository } = await open(connection);
  const before = (await connection.jsm.streams.info(streamOf(connection))).state.messages;
  const begun = await Promise.all(
    Array.from({ length: 64 }, (_, i) => repository.begin(session(`g-${i}`, T0 + 60_000), T0)),
  );
  const after = (await connection.jsm.streams.info(streamOf(connection))).state.messages;
  t.equal(new Set(begun).size, 64, 'every session has a revision of its own');
  // Loading the 4 partitions takes a claim each time a load runs; the 64 records then share the appends.
  t.ok(after - before <= 12, `64 sessions begun in ${after - before} messages`);
  for (let i = 0; i < 64; i++) t.equal((await repository.get(`g-${i}`))?.revision, begun[i]);
});

t.test('a busy writer lingers for more steps; a step reaching an idle writer leaves at once', async (t) => {
  const LINGER_MS = 1_500;
  const [connection] = freshDeployment(everywhere);
  const writer = await JournalUssdSessionRepository.open(connection, {
    maxLifetimeMs: FIVE_MINUTES,
    partitionOf,
    lingerMs: LINGER_MS,
  });
  const messages = async () => (await connection.jsm.streams.info(streamOf(connection))).state.messages;
  const timed = async (write: Promise<unknown>) => {
    const started = performance.now();
    await write;
    return performance.now() - started;
  };
  await writer.begin(session('l-0', T0 + 60_000), T0); // loads partition 0 (every session below is in it)
  const loneMs = await timed(writer.begin(session('l-4', T0 + 60_000), T0));
  t.ok(loneMs < LINGER_MS, `a lone step is not held (${loneMs.toFixed(0)} ms)`);
  const before = await messages();
  // The first leaves at once; the second queues behind it, so its append lingers and the next four join it.
  const first = timed(writer.begin(session('l-8', T0 + 60_000), T0));
  const second = timed(writer.begin(session('l-12', T0 + 60_000), T0));
  const joining: Promise<number>[] = [];
  for (let i = 0; i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    joining.push(timed(writer.begin(session(`l-${16 + 4 * i}`, T0 + 60_000), T0)));
  }
  const [firstMs, secondMs] = await Promise.all([first, second, ...joining]);
  t.ok(firstMs < LINGER_MS, `the first of the burst leaves at once (${firstMs.toFixed(0)} ms)`);
  t.ok(secondMs >= LINGER_MS, `the one queued behind it lingers (${secondMs.toFixed(0)} ms)`);
  t.equal((await messages()) - before, 2, 'six steps in two appends: the four arriving during the linger joined it');
  for (const id of ['l-8', 'l-12', 'l-16', 'l-28']) t.ok(await writer.get(id), `${id} is stored`);
});

t.test("the live set of any node includes every node's writes acknowledged before the listing", async (t) => {
  const nodes = await threeNodes();
  const rounds = 20;
  for (let round = 0; round < rounds; round++) {
    // Node i writes the sessions of partition i, as the leases would have it.
    const writer = nodes[partitionOf(`s-${round}`) % 3].repository;
    const begun = session(`s-${round}`, T0 + 10_000);
    const revision = await writer.begin(begun, T0);
    if (round % 4 === 0)
      await writer.update(session(`s-${round}`, T0 + 10_000, { state: 'ended' }), { value: begun, revision });
    const listed = await nodes[(round + 1) % 3].repository.live(T0);
    t.equal(listed.length, round + 1 - Math.floor(round / 4) - 1, `round ${round}: every live session, no ended one`);
  }
  t.same(
    (await nodes[2].repository.live(T0)).map(({ sessionId }) => sessionId).sort(),
    (await nodes[0].repository.live(T0)).map(({ sessionId }) => sessionId).sort(),
  );
});

t.test('three nodes beginning one session at once: one begins it, the others get a conflict', async (t) => {
  const nodes = await threeNodes();
  for (let round = 0; round < 10; round++) {
    const id = `s-${round}`;
    const results = await Promise.allSettled(
      nodes.map((node, i) => node.repository.begin(session(id, T0 + 10_000, { phoneNumber: `+25470000000${i}` }), T0)),
    );
    const won = results.flatMap((result, i) => (result.status === 'fulfilled' ? [i] : []));
    t.equal(won.length, 1, `round ${round}: one winner`);
    for (const result of results) if (result.status === 'rejected') t.ok(isRevisionConflict(result.reason));
    for (const node of nodes) t.equal((await node.repository.get(id))?.value.phoneNumber, `+25470000000${won[0]}`);
  }
});

t.test(
  'a writer whose partition another writer loaded since: its held copy is refused, a fresh read goes on',
  async (t) => {
    const [a, b] = await threeNodes();
    const begun = session('s-1', T0 + 60_000);
    const first = await a.repository.begin(begun, T0);
    // Node b takes the partition over (its first read loads it: claim, fence, read) and moves the session on.
    const seenByB = (await b.repository.get('s-1'))!;
    t.equal(seenByB.revision, first, 'the new owner reads what the old one wrote');
    const second = { ...begun, state: 'second' };
    const moved = await b.repository.update(second, seenByB);
    // Node a still holds the first revision: its write is refused.
    t.ok(
      isRevisionConflict(
        await refusal(a.repository.update({ ...begun, state: 'stale' }, { value: begun, revision: first })),
      ),
    );
    // Its fresh read loads the partition again (a newer claim) and sees b's step; then b's held copy is the stale one.
    const reread = (await a.repository.get('s-1'))!;
    t.same([reread.revision, reread.value.state], [moved, 'second']);
    const third = await a.repository.update({ ...begun, state: 'third' }, reread);
    t.ok(
      isRevisionConflict(
        await refusal(b.repository.update({ ...begun, state: 'stale' }, { value: second, revision: moved })),
      ),
    );
    t.same((await b.repository.get('s-1'))!.revision, third, 'and b reads the newest again');
    t.equal((await b.repository.get('s-1'))?.value.state, 'third');
  },
);
