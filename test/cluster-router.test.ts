// The cluster's actor router on a real 3-server NATS JetStream cluster: three nodes, each a real ActorRuntime (one
// actor host, its own LMDB) behind a NatsActorRouter. Chat actors keep their state in their node's LMDB, so a
// session seen from every node proves every node reached the same single actor.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { NatsActorRouter, type ActorRequest } from '../dist/src/cluster/nats-router.js';
import { NodeLinks } from '../dist/src/cluster/node-link/peers.js';
import { LinkServer } from '../dist/src/cluster/node-link/server.js';
import { routedCalls } from '../dist/src/metrics/catalogue.js';
import { PartitionLeases, partitionOf } from '../dist/src/cluster/partition-leases.js';
import { loadConfig } from '../dist/src/app/config.js';
import { CHAT_ACTOR } from '../dist/src/oracle/chat/chat-protocol.js';
import { createLogger } from '../dist/src/base/log.js';
import { ActorBusyError, ActorRuntime, DomainError, HostUnavailableError } from '../dist/src/runtime/actor-runtime.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

t.setTimeout(90_000);
const nats = await startTestNatsCluster(t);
const PARTITIONS = 128;
const oracle = { oracleDid: 'did:key:z6MkOracle', oracleName: 'Oracle' };
const userDid = 'did:key:z6MkUser';
const CHAT = CHAT_ACTOR.kind;

async function startRuntime(id: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `router-${id}-`));
  const config = loadConfig({
    DATA_DIR: dataDir,
    ACTOR_THREADS: '1',
    LOG_LEVEL: 'silent',
    METRICS_ENABLED: 'false',
    ACTOR_MAILBOX_LIMIT: '2',
  });
  const runtime = new ActorRuntime({ threads: 1, config, log: createLogger('silent') });
  t.teardown(async () => {
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await runtime.start();
  return runtime;
}

/** A node with `link` takes and makes calls over the node link (as the server does by default); without, NATS only. */
async function joinCluster(id: string, server: number, runtime: ActorRuntime, link: boolean) {
  const connection = await connectCluster({ NATS_URL: [nats.servers[server].url], NATS_PREFIX: 'rt' }, id);
  let router: NatsActorRouter | undefined;
  const linkServer = link
    ? await LinkServer.listen({
        host: '127.0.0.1',
        port: 0,
        token: randomBytes(16).toString('hex'),
        answer: (request) => router!.answer(request as ActorRequest),
      })
    : undefined;
  const links = link ? new NodeLinks() : undefined;
  const leases = await PartitionLeases.join(connection, {
    nodeId: id,
    partitions: PARTITIONS,
    link: linkServer?.address,
  });
  router = new NatsActorRouter({ connection, leases, local: runtime, callTimeoutMs: 10_000, links });
  t.teardown(async () => {
    router.close();
    await leases.leave();
    await linkServer?.close();
    links?.close();
    if (!connection.nc.isClosed()) await connection.close();
  });
  return { id, runtime, connection, leases, router: router as NatsActorRouter, linkServer };
}

// The actor hosts start side by side (each takes seconds to load on a busy machine); the nodes join one after the
// other, which keeps the test short (three first joins racing on a new lease bucket cost a NATS request timeout).
const ids = ['node-a', 'node-b', 'node-c'];
const runtimes = await Promise.all(ids.map(startRuntime));
const nodes: Awaited<ReturnType<typeof joinCluster>>[] = [];
// a and c call and answer over the node link, b over NATS only: every pair of the two ways is crossed.
for (const [i, id] of ids.entries()) nodes.push(await joinCluster(id, i, runtimes[i], id !== 'node-b'));
const partitionsHeld = () => nodes.map((node) => node.leases.owned.size);
// Wait until the three hold every partition between them (the leases' own test shows the balance).
while (partitionsHeld().reduce((a, b) => a + b, 0) !== PARTITIONS || partitionsHeld().some((n) => n === 0)) {
  await new Promise<void>((resolve) => nodes[0].leases.once('table', () => resolve()));
}
const ownerOf = (sessionId: string) => nodes.find((node) => node.leases.owns(partitionOf(sessionId, PARTITIONS)))!;
const sessionIds = Array.from({ length: 12 }, (_, i) => `router-session-${i}`);

t.test('a message for any actor id reaches the same single actor from every node', async (t) => {
  const routed = () => ({ link: routedCalls.with('link').value, nats: routedCalls.with('nats').value });
  const before = routed();
  let remote = 0;
  for (const [i, sessionId] of sessionIds.entries()) {
    const creator = nodes[i % 3];
    if (ownerOf(sessionId) !== creator) remote++;
    const created = (await creator.router.send(CHAT, sessionId, { type: 'create', userDid, ...oracle })) as {
      session: { sessionId: string };
    };
    t.equal(created.session.sessionId, sessionId);
  }
  t.ok(remote >= 4, `${remote} of ${sessionIds.length} sessions were created through a node that does not hold them`);
  for (const sessionId of sessionIds) {
    const owns = [];
    for (const node of nodes) owns.push(await node.router.send(CHAT, sessionId, { type: 'owns', userDid }));
    t.same(owns, [true, true, true], `${sessionId} (held by ${ownerOf(sessionId).id}) is found through every node`);
  }
  const signalled = await Promise.all(
    nodes.map((node) => node.router.signal(CHAT, sessionIds[0], { type: 'owns', userDid })),
  );
  t.same(signalled, [true, true, true], 'a signal reaches the actor in memory from every node');
  const after = routed();
  t.ok(after.link > before.link, `calls between a and c went over the link (${after.link - before.link})`);
  t.ok(after.nats > before.nats, `calls from or to b went over NATS (${after.nats - before.nats})`);
});

t.test('a refusal on the owning node arrives as the same DomainError, with its code', async (t) => {
  const sessionId = sessionIds[1];
  const others = nodes.filter((node) => node !== ownerOf(sessionId));
  for (const node of others) {
    const refusal = await node.router
      .send(CHAT, sessionId, { type: 'create', userDid, ...oracle })
      .catch((error: unknown) => error);
    t.ok(refusal instanceof DomainError, `through ${node.id}: a DomainError`);
    t.match(refusal, { code: 'session_exists', message: 'Session already exists' });
  }
  const missing = await others[0].router
    .send(CHAT, 'router-absent', { type: 'delete', userDid })
    .catch((error: unknown) => error);
  t.match(missing, { name: 'DomainError', code: 'session_not_found' });
  // Mailboxes hold 2 here: a burst on one actor through another node is refused there, and says so as locally.
  const burst = await Promise.allSettled(
    Array.from({ length: 30 }, () => others[0].router.send(CHAT, sessionId, { type: 'messages', userDid, from: 0 })),
  );
  const refused = burst.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
  t.ok(refused.length > 0 && refused.length < 30, `${refused.length} of 30 refused by the owner's full mailbox`);
  t.ok(
    refused.every((error) => error instanceof ActorBusyError),
    'each refusal is an ActorBusyError',
  );
});

t.test(
  "after a node dies its partitions' messages are served by the survivors within the takeover bound",
  async (t) => {
    const [a, b, c] = nodes;
    const orphans = sessionIds.filter((id) => ownerOf(id) === c);
    t.ok(orphans.length > 0, `${orphans.length} sessions were held by ${c.id}`);
    // Death: its connection goes, so its subscriptions vanish and its lease lapses without anything given back.
    const diedAt = performance.now();
    void c.linkServer?.close();
    await c.connection.close();
    // The dead node's subscriptions leave the other NATS servers a moment later (the routes carry the lost interest).
    // Until then a request can still be forwarded towards it and go unanswered, which the router rightly reports as
    // "died with the call in flight" (the dead node might have run it); on a loaded machine that moment is visible.
    // So wait until a request on each orphaned subject no longer times out (no responders, or a survivor answers).
    for (const node of [a, b]) {
      for (const partition of new Set(orphans.map((id) => partitionOf(id, PARTITIONS)))) {
        const subject = node.router.subjectOf(partition);
        while (
          await node.connection.nc.request(subject, '', { timeout: 200 }).then(
            () => false,
            (e: Error) => e.name === 'TimeoutError',
          )
        );
      }
    }
    // Chat state is still node-local LMDB, so the survivors answer from their own: the session is not there.
    const answers = await Promise.all(
      orphans.flatMap((id) => [a, b].map((node) => node.router.send(CHAT, id, { type: 'owns', userDid }))),
    );
    const servedMs = performance.now() - diedAt;
    t.same(
      answers,
      answers.map(() => false),
      'every call was answered by a survivor',
    );
    t.ok(
      servedMs <= 5_000,
      `served within 5 s of the death (${servedMs.toFixed(0)} ms, lease ${a.leases.leaseTtlMs} ms)`,
    );
    for (const id of orphans)
      t.ok(
        a.leases.owns(partitionOf(id, PARTITIONS)) || b.leases.owns(partitionOf(id, PARTITIONS)),
        `${id} moved to a survivor`,
      );
    t.comment(`calls for a dead node's partitions answered ${servedMs.toFixed(0)} ms after its death`);
  },
);

t.test('a partition whose owner holds its lease but does not answer fails clearly once the wait is over', async (t) => {
  const [a, b] = nodes;
  const impatient = new NatsActorRouter({
    connection: a.connection,
    leases: a.leases,
    local: a.runtime,
    failoverWaitMs: 300,
  });
  t.teardown(() => impatient.close());
  b.router.close(); // b keeps its leases but stops answering: nothing in the table moves
  const sessionId = sessionIds.find((id) => b.leases.owns(partitionOf(id, PARTITIONS)))!;
  // The unsubscription reaches a's NATS server a moment later (until then a request would be dropped, not refused).
  const subject = impatient.subjectOf(partitionOf(sessionId, PARTITIONS));
  while (
    await a.connection.nc.request(subject, '', { timeout: 200 }).then(
      () => true,
      (e: Error) => e.name === 'TimeoutError',
    )
  );
  const startedAt = performance.now();
  const error = await impatient.send(CHAT, sessionId, { type: 'owns', userDid }).catch((e: unknown) => e);
  t.ok(error instanceof HostUnavailableError, 'a HostUnavailableError, as when a local host cannot take the call');
  t.match(error, { message: /no node answers for partition \d+/ });
  const waitedMs = performance.now() - startedAt;
  t.ok(waitedMs >= 300 && waitedMs < 2_000, `after the failover wait (${waitedMs.toFixed(0)} ms)`);
});
