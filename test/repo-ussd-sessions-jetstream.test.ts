// The UssdSessionRepository contract against JetStream KV on a real 3-server NATS cluster (one cluster for the file),
// and what only the cluster shows: expiry by the bucket's max age, a live set that sees every node's writes, and
// nodes on different servers racing to begin one session.
import t from 'tap';
import type { Test } from 'tap';
import {
  JetStreamUssdSessionRepository,
  SESSION_BUCKET_MARGIN_MS,
} from '../dist/src/ussd/sessions/jetstream-repository.js';
import { session, T0, ussdSessionRepositoryContract } from './contracts/ussd-sessions.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { connectTo, freshDeployment } from './helpers/nats-repositories.js';
import type { ClusterConnection } from '../dist/src/cluster/connection.js';

const nats = await startTestNatsCluster(t);
const everywhere = await connectTo(t, nats);
const perServer = await Promise.all(nats.servers.map((server, i) => connectTo(t, nats, [server.url], `node-${i}`)));
const FIVE_MINUTES = 300_000;

async function open(t: Test, connection: ClusterConnection, maxLifetimeMs = FIVE_MINUTES, marginMs?: number) {
  const repository = await JetStreamUssdSessionRepository.open(connection, { maxLifetimeMs, marginMs });
  t.teardown(() => repository.close());
  return repository;
}

ussdSessionRepositoryContract(t, (t) => open(t, freshDeployment(everywhere)[0]));

/** One new deployment opened by three nodes: the first creates the bucket (nats-server 2.9 may leave concurrent creates unanswered). */
async function threeNodes(t: Test) {
  const [first, ...others] = freshDeployment(...perServer);
  const opened = await open(t, first);
  return [opened, ...(await Promise.all(others.map((connection) => open(t, connection))))];
}

t.test('the bucket keeps a record for the longest session life plus a margin, with three replicas', async (t) => {
  const [connection] = freshDeployment(everywhere);
  await open(t, connection);
  const { config } = await connection.jsm.streams.info(`KV_${connection.prefix}_ussd_sessions`);
  t.equal(config.max_age, (FIVE_MINUTES + SESSION_BUCKET_MARGIN_MS) * 1_000_000);
  t.equal(config.num_replicas, 3);
  await open(t, connection, 2 * FIVE_MINUTES);
  const longer = await connection.jsm.streams.info(`KV_${connection.prefix}_ussd_sessions`);
  t.equal(
    longer.config.max_age,
    (2 * FIVE_MINUTES + SESSION_BUCKET_MARGIN_MS) * 1_000_000,
    'a longer session TTL configured later lengthens it',
  );
});

t.test('a session not written for the bucket max age is gone, and its id can begin again', async (t) => {
  // A 1 s max age (500 ms life + 500 ms margin), so the test waits seconds, not the default margin's minute.
  const [connection] = freshDeployment(everywhere);
  const repository = await open(t, connection, 500, 500);
  const now = Date.now();
  await repository.begin(session('s-1', now + 500, { createdAt: now }), now);
  t.ok(await repository.get('s-1'));
  const started = Date.now();
  while ((await repository.get('s-1')) !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(Date.now() - started < 5000, 'removed by the bucket within seconds');
  t.same(await repository.live(Date.now()), [], 'and not listed');
  t.type(await repository.begin(session('s-1', Date.now() + 500), Date.now()), 'number', 'the id begins again');
});

t.test('the watch behind the live set runs only while it is asked for, and starts again complete', async (t) => {
  const [connection] = freshDeployment(everywhere);
  const repository = await JetStreamUssdSessionRepository.open(connection, {
    maxLifetimeMs: FIVE_MINUTES,
    liveIdleMs: 400,
  });
  t.teardown(() => repository.close());
  const now = Date.now();
  await repository.begin(session('before', now + 60_000), now);
  t.notOk(repository.watching, 'no watch until the live set is asked for (the writes of every step are not followed)');
  t.same(
    await repository.live(now),
    [{ sessionId: 'before', expiresAt: now + 60_000 }],
    'a listing starts it and sees every write before it',
  );
  t.ok(repository.watching);
  const started = Date.now();
  while (repository.watching) await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(Date.now() - started < 2000, 'stopped once nothing asked for the idle time');
  await repository.begin(session('while-idle', now + 60_000), now);
  t.equal(repository.liveCount(now), 0, 'the first count after idle starts the watch and answers what it has so far');
  t.same(
    (await repository.live(now)).map(({ sessionId }) => sessionId).sort(),
    ['before', 'while-idle'],
    'the restarted watch has the writes made while it was stopped',
  );
  t.equal(repository.liveCount(now), 2);
});

t.test("the live set of any node includes every node's writes acknowledged before the listing", async (t) => {
  const nodes = await threeNodes(t);
  const rounds = 20;
  for (let round = 0; round < rounds; round++) {
    const writer = nodes[round % 3];
    const begun = session(`s-${round}`, T0 + 10_000);
    const revision = await writer.begin(begun, T0);
    if (round % 4 === 0)
      await writer.update(session(`s-${round}`, T0 + 10_000, { state: 'ended' }), { value: begun, revision });
    const listed = await nodes[(round + 1) % 3].live(T0);
    t.equal(listed.length, round + 1 - Math.floor(round / 4) - 1, `round ${round}: every live session, no ended one`);
  }
  t.same(
    (await nodes[2].live(T0)).map(({ sessionId }) => sessionId).sort(),
    (await nodes[0].live(T0)).map(({ sessionId }) => sessionId).sort(),
  );
});

t.test('three nodes beginning one session at once: one begins it, the others get a conflict', async (t) => {
  const nodes = await threeNodes(t);
  for (let round = 0; round < 10; round++) {
    const results = await Promise.allSettled(
      nodes.map((node, i) => node.begin(session(`s-${round}`, T0 + 10_000, { phoneNumber: `+25470000000${i}` }), T0)),
    );
    const won = results.flatMap((result, i) => (result.status === 'fulfilled' ? [i] : []));
    t.equal(won.length, 1, `round ${round}: one winner`);
    t.equal((await nodes[0].get(`s-${round}`))?.value.phoneNumber, `+25470000000${won[0]}`);
  }
});
