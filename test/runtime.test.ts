// The actor runtime: mailboxes, sharding, idle eviction and several hosts, as units and through HTTP.
import t from 'tap';
import { ActorHost, type Actor, type HostContext } from '../dist/src/runtime/actor-host.js';
import { Mailbox } from '../dist/src/runtime/mailbox.js';
import { shardOf } from '../dist/src/runtime/shard.js';
import { eventually } from './helpers/oracle.js';
import { startTestServer } from './helpers/server.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

t.test('a mailbox runs one task at a time, in order, and a failure does not block the next', async (t) => {
  const mailbox = new Mailbox();
  const log: string[] = [];
  let running = 0;
  const task =
    (name: string, fail = false) =>
    async () => {
      running++;
      t.equal(running, 1, `${name} runs alone`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(name);
      running--;
      if (fail) throw new Error(name);
      return name;
    };
  const results = await Promise.allSettled([
    mailbox.post(task('a')),
    mailbox.post(task('b', true)),
    mailbox.post(task('c')),
  ]);
  t.same(log, ['a', 'b', 'c']);
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  t.equal(mailbox.pending, 0);
});

t.test(
  'a mailbox: a synchronous throw is a rejection, a task posted by a running one waits for it, drained waits for all',
  async (t) => {
    const mailbox = new Mailbox();
    const log: string[] = [];
    let inner: Promise<unknown> | undefined;
    const thrown = mailbox.post(() => {
      log.push('throws');
      throw new Error('at once');
    });
    const outer = mailbox.post(() => {
      log.push('outer');
      inner = mailbox.post(() => void log.push('inner'));
      log.push('outer ends');
      return 'outer';
    });
    const drained = mailbox.drained().then(() => log.push('drained'));
    await t.rejects(thrown, /at once/);
    t.equal(await outer, 'outer');
    await inner;
    await drained;
    t.same(log, ['throws', 'outer', 'outer ends', 'inner', 'drained']);
    t.equal(mailbox.pending, 0);
  },
);

t.test('a mailbox: a queued task whose signal fires once it runs is not withdrawn; it sees the signal', async (t) => {
  const mailbox = new Mailbox();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let finish!: () => void;
  const finishing = new Promise<void>((resolve) => (finish = resolve));
  const controller = new AbortController();
  const first = mailbox.post(() => gate);
  const second = mailbox.post(async (signal) => {
    started();
    await finishing;
    return signal?.aborted;
  }, controller.signal);
  release();
  await first;
  await running;
  controller.abort();
  finish();
  t.equal(await second, true, 'it ran to its end and saw the abort');
  await mailbox.drained();
});

t.test('shardOf is stable, in range and spreads ids', async (t) => {
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 4000; i++) {
    const shard = shardOf(`session-${i}`, 4);
    t.equal(shardOf(`session-${i}`, 4), shard);
    counts[shard]++;
  }
  for (const count of counts) t.ok(count > 800 && count < 1200, `shard holds ${count} of 4000`);
});

t.test('idle actors are evicted, busy ones kept, and evicted ones come back on the next message', async (t) => {
  const created: string[] = [];
  const disposed: string[] = [];
  let busy = false;
  const kind = {
    name: 'counter',
    create(id: string): Actor {
      created.push(id);
      let count = 0;
      return {
        receive: async () => ++count,
        isIdle: () => !(busy && id === 'b'),
        dispose: () => void disposed.push(id),
      };
    },
  };
  const host = new ActorHost([kind], {} as HostContext, 1000);
  t.teardown(() => host.close());
  t.equal(await host.send('counter', 'a', {}), 1);
  t.equal(await host.send('counter', 'a', {}), 2, 'the same actor keeps its state while in memory');
  await host.send('counter', 'b', {});
  busy = true;
  t.equal(host.evictIdle(Date.now() + 500), 0, 'nothing idle long enough yet');
  t.equal(host.evictIdle(Date.now() + 5000), 1, 'a evicted, b kept because it says it is busy');
  t.same(disposed, ['a']);
  t.equal(host.stats().actors, 1);
  t.equal(await host.send('counter', 'a', {}), 1, 'an evicted actor is created again');
  t.same(created, ['a', 'b', 'a']);
  await t.rejects(host.send('nope', 'x', {}), /Unknown actor kind nope/);
});

t.test('several hosts: sessions spread over them, idle actors leave memory, sessions continue from LMDB', async (t) => {
  // Idle time 3 s: the 24 steps below must all land within it (at a load average of 19 they took over 1 s).
  const server = await startTestServer(t, { env: { ACTOR_THREADS: '2', ACTOR_IDLE_SECONDS: '3' } });
  const sessions = Array.from({ length: 12 }, (_, i) => new GatewaySession(server.url, `spread-${i}`));
  for (const s of sessions) await s.send();
  for (const s of sessions) await s.send('1');
  const stats = await server.runtime.stats();
  t.equal(stats.length, 2);
  t.ok(
    stats.every((host) => host.actors > 0),
    `both hosts hold actors: ${stats.map((h) => h.actors)}`,
  );
  t.equal(stats[0].actors + stats[1].actors, 12);
  for (let i = 0; i < 12; i++) t.equal(server.runtime.hostOf(`spread-${i}`), shardOf(`spread-${i}`, 2));

  // After the idle time the actors are dropped; the next input reloads each session from LMDB.
  const actorsHeld = async () => (await server.runtime.stats()).reduce((sum, host) => sum + host.actors, 0);
  await eventually(async () => (await actorsHeld()) === 0, 'idle actors to be evicted', 400);
  t.equal(await actorsHeld(), 0, 'idle actors were evicted');
  for (const s of sessions) t.match(await s.send('2'), /^CON Pricing/);
});
