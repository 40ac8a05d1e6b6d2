// The NATS client's commands of one event-loop iteration leave in one socket write (src/cluster/coalesced-writes.ts):
// twenty publishes made by twenty timer callbacks of one timers phase reach the server, in order, through one or two
// writes instead of twenty. (Without the corking, nats-core flushes after each callback's microtasks.)
import type { Socket } from 'node:net';
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t, 1);

t.test('publishes made by separate callbacks of one loop iteration go out in one write', async (t) => {
  const publisher = await connectCluster({ NATS_URL: [nats.urls], NATS_PREFIX: 'co' }, 'coalesce-publisher');
  const subscriber = await connectCluster({ NATS_URL: [nats.urls], NATS_PREFIX: 'co' }, 'coalesce-subscriber');
  t.teardown(() => Promise.all([publisher.close(), subscriber.close()]));
  const received: string[] = [];
  const all = new Promise<void>((resolve) => {
    subscriber.nc.subscribe('co.test', {
      callback: (_error, msg) => {
        received.push(msg.string());
        if (received.length === 20) resolve();
      },
    });
  });
  await subscriber.nc.flush();

  // The client's socket (nats-core keeps it on its transport): count the writes that reach the kernel.
  const socket = (publisher.nc as unknown as { protocol: { transport: { socket: Socket } } }).protocol.transport.socket;
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method] as (...args: unknown[]) => void;
    socket[method] = function (this: Socket, ...args: unknown[]) {
      writes++;
      return original.apply(this, args);
    } as never;
  }
  await new Promise<void>((resolve) => {
    for (let i = 0; i < 20; i++) {
      setTimeout(() => {
        publisher.nc.publish('co.test', String(i));
        if (i === 19) resolve();
      }, 0);
    }
  });
  await all;
  t.same(
    received,
    Array.from({ length: 20 }, (_, i) => String(i)),
    'every publish arrived, in order',
  );
  t.ok(writes <= 2, `20 publishes from 20 callbacks went out in ${writes} socket write(s)`);
});
