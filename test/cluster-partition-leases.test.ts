// Partition leases on a real 3-server NATS JetStream cluster: balance on join, takeover when a node dies (measured),
// hand-back on leave, and never two owners of one partition at the same moment.
import t from 'tap';
import { connectCluster, type ClusterConnection } from '../dist/src/cluster/connection.js';
import { PartitionLeases, partitionOf, shareOf } from '../dist/src/cluster/partition-leases.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

t.setTimeout(90_000);
const nats = await startTestNatsCluster(t);
const PARTITIONS = 128;

async function connectTo(url: string, name: string, prefix = 'pl'): Promise<ClusterConnection> {
  const connection = await connectCluster({ NATS_URL: [url], NATS_PREFIX: prefix }, name);
  t.teardown(() => (connection.nc.isClosed() ? undefined : connection.nc.close()));
  return connection;
}

t.test('placement units: partitionOf is stable and spreads; shares add up to every partition', async (t) => {
  t.equal(partitionOf('session-1', PARTITIONS), partitionOf('session-1', PARTITIONS));
  const counts = new Array(PARTITIONS).fill(0);
  for (let i = 0; i < 12_800; i++) counts[partitionOf(`*384*${i}#`, PARTITIONS)]++;
  t.ok(
    Math.max(...counts) < 200 && Math.min(...counts) > 40,
    `100 per partition on average, seen ${Math.min(...counts)}..${Math.max(...counts)}`,
  );
  for (const live of [['a'], ['a', 'b'], ['a', 'b', 'c'], ['a', 'b', 'c', 'd', 'e']]) {
    t.equal(
      live.reduce((sum, id) => sum + shareOf(id, live, PARTITIONS), 0),
      PARTITIONS,
      `${live.length} nodes`,
    );
  }
  t.equal(shareOf('z', ['a'], PARTITIONS), 0, 'a node that is not live has no share');
});

t.test('join, balance, kill, leave', async (t) => {
  const members = new Map<string, PartitionLeases>();
  const overlaps: string[] = [];
  const watchers: Array<() => void> = [];
  /** After every change anywhere: no partition is owned by two members at that moment. */
  const checkDisjoint = () => {
    const seen = new Map<number, string>();
    for (const [id, member] of members) {
      for (const p of member.owned) {
        if (seen.has(p)) overlaps.push(`partition ${p}: ${seen.get(p)} and ${id}`);
        seen.set(p, id);
      }
    }
    for (const wake of watchers.splice(0)) wake();
  };
  /** Resolves when `condition` holds, checked after every ownership change (no polling). */
  const until = (condition: () => boolean, timeoutMs = 15_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not reached in ${timeoutMs} ms: ${describe()}`)), timeoutMs);
      const check = () => {
        if (condition()) {
          clearTimeout(timer);
          resolve();
        } else watchers.push(check);
      };
      check();
    });
  const describe = () => [...members].map(([id, m]) => `${id}=${m.owned.size}`).join(' ');
  const sizes = (ids: string[]) => ids.map((id) => members.get(id)!.owned.size);
  const covered = (ids: string[]) => sizes(ids).reduce((a, b) => a + b, 0) === PARTITIONS;
  const balanced = (ids: string[]) => covered(ids) && Math.max(...sizes(ids)) - Math.min(...sizes(ids)) <= 1;

  const join = async (id: string, server: number) => {
    const connection = await connectTo(nats.servers[server].url, id);
    const member = await PartitionLeases.join(connection, { nodeId: id, partitions: PARTITIONS });
    member.on('change', checkDisjoint);
    members.set(id, member);
    return { member, connection };
  };

  await join('node-a', 0);
  await until(() => members.get('node-a')!.owned.size === PARTITIONS);
  t.pass('a lone node owns every partition');

  await join('node-b', 1);
  await until(() => balanced(['node-a', 'node-b']));
  t.same(sizes(['node-a', 'node-b']), [64, 64], 'two nodes: 64 each');

  const joinedAt = performance.now();
  const { connection: cConnection } = await join('node-c', 2);
  await until(() => balanced(['node-a', 'node-b', 'node-c']));
  const rebalanceMs = performance.now() - joinedAt;
  t.same(sizes(['node-a', 'node-b', 'node-c']).sort(), [42, 43, 43], 'three nodes: 43/43/42');
  t.same(members.get('node-a')!.liveNodes(), ['node-a', 'node-b', 'node-c'], 'every node sees the others live');
  // node-c owns a partition once its claim is acknowledged; node-a learns it from its watch a moment later.
  const cPartition = [...members.get('node-c')!.owned][0];
  const nodeA = members.get('node-a')!;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node-a never saw node-c own ${cPartition}`)), 5_000);
    const check = () => {
      if (nodeA.ownerOf(cPartition) !== 'node-c') return;
      clearTimeout(timer);
      nodeA.off('table', check);
      resolve();
    };
    nodeA.on('table', check);
    check();
  });
  t.equal(nodeA.ownerOf(cPartition), 'node-c', 'the others know who owns what');

  // Crash: node-c's connection goes away without giving anything back; the others wait for its lease to lapse.
  const cShare = members.get('node-c')!.owned.size;
  const crashedAt = performance.now();
  await cConnection.close();
  members.delete('node-c');
  await until(() => covered(['node-a', 'node-b']), 15_000);
  const takeoverMs = performance.now() - crashedAt;
  t.ok(balanced(['node-a', 'node-b']), `the survivors split all ${PARTITIONS} again: ${describe()}`);
  t.ok(
    takeoverMs <= 5_000,
    `the ${cShare} partitions of the dead node were taken over within 5 s (${takeoverMs.toFixed(0)} ms)`,
  );

  // Leave: node-b gives its partitions back and removes its lease, so node-a takes them without waiting.
  const leftAt = performance.now();
  const b = members.get('node-b')!;
  members.delete('node-b');
  await b.leave();
  await until(() => members.get('node-a')!.owned.size === PARTITIONS);
  const handbackMs = performance.now() - leftAt;
  t.ok(
    handbackMs < members.get('node-a')!.leaseTtlMs,
    `a clean leave is taken over before a lease could lapse (${handbackMs.toFixed(0)} ms)`,
  );

  t.same(overlaps, [], 'no partition ever had two owners at once');
  t.comment(
    `rebalance on join ${rebalanceMs.toFixed(0)} ms; takeover after a crash ${takeoverMs.toFixed(0)} ms (lease ${members.get('node-a')!.leaseTtlMs} ms); hand-back on leave ${handbackMs.toFixed(0)} ms`,
  );
  await members.get('node-a')!.leave();
});

t.test('three nodes joining a new lease bucket at the same moment all join, and split the partitions', async (t) => {
  const connections = await Promise.all(
    nats.servers.map((server, i) => connectTo(server.url, `same-moment-${i}`, 'pl2')),
  );
  const members = await Promise.all(
    connections.map((connection, i) =>
      PartitionLeases.join(connection, { nodeId: `same-moment-${i}`, partitions: PARTITIONS }),
    ),
  );
  const ids = members.map((member) => member.nodeId);
  const split = () =>
    members.reduce((sum, member) => sum + member.owned.size, 0) === PARTITIONS &&
    members.every((m) => m.owned.size > 0);
  await new Promise<void>((resolve) => {
    const check = () => split() && resolve();
    for (const member of members) member.on('change', check);
    check();
  });
  t.same(members[0].liveNodes(), [...ids].sort(), 'each node sees all three live');
  t.same(members.map((m) => m.owned.size).sort(), [42, 43, 43], 'balanced');
  await Promise.all(members.map((member) => member.leave()));
});
