// A call routed over NATS runs on one node, even in the moment two nodes both answer for its partition (a lease
// moving: the old owner not yet unsubscribed when the new one subscribes, or a split healing while both still
// believe they hold it). Owners subscribe to a partition's subject in one queue group, so NATS hands each request to
// one of them (src/cluster/nats-router.ts); two subscribers each running it would run a chat turn twice.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { connect } from '@nats-io/transport-node';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { NatsActorRouter } from '../dist/src/cluster/nats-router.js';
import type { PartitionLeases } from '../dist/src/cluster/partition-leases.js';
import type { ActorRouter } from '../dist/src/runtime/router.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t);
const PARTITION = 7;

/** A node's view of the lease table in which it holds PARTITION (both nodes hold the same view). */
function holding(nodeId: string): PartitionLeases {
  const table = Object.assign(new EventEmitter(), {
    nodeId,
    partitions: 16,
    owned: new Set([PARTITION]),
    owns: (partition: number) => partition === PARTITION,
    ownerOf: () => nodeId,
    isLive: () => true,
    liveNodes: () => [nodeId],
    linkOf: () => undefined,
  });
  return table as unknown as PartitionLeases;
}

t.test('two nodes holding one partition: each request runs once', async (t) => {
  const runs: string[] = [];
  for (const [i, nodeId] of ['old-owner', 'new-owner'].entries()) {
    const connection = await connectCluster({ NATS_URL: [nats.servers[i].url], NATS_PREFIX: 'one' }, nodeId);
    t.teardown(() => connection.close());
    const local = {
      send: async () => {
        runs.push(nodeId);
        return 'ran';
      },
      signal: async () => 'ok',
    } as unknown as ActorRouter;
    const router = new NatsActorRouter({ connection, leases: holding(nodeId), local });
    t.teardown(() => router.close());
    await connection.nc.flush();
  }
  const caller = await connect({ servers: nats.servers[2].url });
  t.teardown(() => caller.close());
  const request = (n: number) =>
    caller.request(
      `one.actor.${PARTITION}`,
      JSON.stringify({ op: 'send', kind: 'k', actorId: `a${n}`, message: n, timeoutMs: 5_000 }),
      { timeout: 5_000 },
    );
  // Until both subscriptions have crossed the routes to the caller's server (a request then reaches either).
  for (const started = Date.now(); Date.now() - started < 5_000; ) {
    const seen = new Set(runs);
    if (seen.size === 2) break;
    await request(-1).catch(() => undefined);
  }
  t.same(new Set(runs), new Set(['old-owner', 'new-owner']), 'both nodes answer the subject');
  runs.length = 0;
  const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => request(n)));
  t.equal(answers.length, 40, 'every request answered');
  // Let any second delivery run before counting.
  await caller.flush();
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(runs.length, 40, `40 requests ran ${runs.length} times in all`);
});
