// The lean RPC between the main thread and an actor host (runtime/rpc.ts) and the host's shared deadline signals
// (runtime/deadline-signals.ts), over real MessageChannels as between threads.
import t from 'tap';
import type { Test } from 'tap';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { batchingEndpoint } from '../dist/src/runtime/batching-endpoint.js';
import { DeadlineSignals } from '../dist/src/runtime/deadline-signals.js';
import { RpcClient, serve, type CallPolicy } from '../dist/src/runtime/rpc.js';

interface Api {
  echo(value: unknown): unknown;
  later(ms: number): Promise<string>;
  never(): Promise<void>;
  pipe(port: MessagePort): void;
}

function connect(t: Test, sweepMs = 10) {
  const { port1, port2 } = new MessageChannel();
  t.teardown(() => {
    port1.close();
    port2.close();
  });
  const api: Api = {
    echo: (value) => value,
    later: (ms) => new Promise((resolve) => setTimeout(resolve, ms, 'late')),
    never: () => new Promise(() => undefined),
    pipe: (port) => {
      port.postMessage('through the transferred port');
      port.close();
    },
  };
  serve(api, batchingEndpoint(port2));
  return new RpcClient<Api>(batchingEndpoint(port1), sweepMs);
}

const settled: string[] = [];
const policy = (name: string, graceMs = 0): CallPolicy => ({
  graceMs,
  timedOut: (ms) => new Error(`${name}: no answer within ${ms} ms`),
  fromRemote: (error) => error,
  settled: () => void settled.push(name),
});

t.test('calls in one turn share a batch and each gets its own answer; structured values cross intact', async (t) => {
  const client = connect(t);
  const values = [{ a: [1, 2], b: undefined, c: new Date(5) }, 'two', 3];
  const answers = await Promise.all(values.map((value) => client.call('echo', [value], 1_000, policy('echo'))));
  t.same(answers, values);
  t.type((answers[0] as { c: Date }).c, Date);
  t.equal(client.pending, 0);
});

t.test('a transferred port reaches the other side (how a stream travels)', async (t) => {
  const client = connect(t);
  const { port1, port2 } = new MessageChannel();
  const received = new Promise((resolve) => port1.once('message', resolve));
  await client.call('pipe', [port2], 1_000, policy('pipe'), [port2]);
  t.equal(await received, 'through the transferred port');
  port1.close();
});

t.test('no answer within timeout + grace fails the call once, and a late answer is dropped', async (t) => {
  settled.length = 0;
  const client = connect(t);
  const started = Date.now();
  await t.rejects(client.call('later', [150], 30, policy('late', 20)), { message: 'late: no answer within 30 ms' });
  t.ok(Date.now() - started >= 50, 'not before timeout + grace');
  t.equal(client.pending, 0);
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.same(settled, ['late'], 'settled once, the late answer changed nothing');
});

t.test('failAll rejects every pending call and settles each', async (t) => {
  settled.length = 0;
  const client = connect(t);
  const calls = [client.call('never', [], 10_000, policy('a')), client.call('never', [], 10_000, policy('b'))];
  client.failAll(new Error('host gone'));
  for (const call of calls) await t.rejects(call, { message: 'host gone' });
  t.same(settled, ['a', 'b']);
  t.equal(client.pending, 0);
});

t.test(
  "a call given its deadline's signal rejects with its reason when it fires; its slot settles on the answer",
  async (t) => {
    settled.length = 0;
    const client = connect(t);
    const deadline = new AbortController();
    const reason = new Error('the deadline passed');
    const calls = [
      client.call('later', [80], 10_000, policy('first'), undefined, deadline.signal),
      client.call('later', [80], 10_000, policy('second'), undefined, deadline.signal),
    ];
    const other = client.call('later', [80], 10_000, policy('other'));
    setTimeout(() => deadline.abort(reason), 10);
    for (const call of calls) await t.rejects(call, reason, 'each call waiting on the signal, with its reason');
    t.same(settled, [], 'the slots stay counted until the host answers');
    t.equal(await other, 'late', 'a call on no signal is not touched');
    await new Promise((resolve) => setTimeout(resolve, 20));
    t.same(settled.sort(), ['first', 'other', 'second'], 'each settled once its answer came');
    t.equal(client.pending, 0);
  },
);

t.test('deadline signals: one per slice, fired once its last deadline has passed', async (t) => {
  const signals = new DeadlineSignals(20);
  // A deadline's timer keeps no thread alive (whoever waits for the call does): this test waits for it.
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => (signals.clear(), clearInterval(alive)));
  const base = Math.ceil(Date.now() / 20) * 20 + 40;
  const first = signals.at(base + 1);
  t.equal(signals.at(base + 19), first, 'deadlines in one slice share a signal');
  t.not(signals.at(base + 21), first, 'the next slice has its own');
  await new Promise((resolve) => first.addEventListener('abort', resolve, { once: true }));
  const firedAt = Date.now();
  t.ok(firedAt >= base + 1, 'not before the deadline');
  // The timer is set for the slice's end; the bound is loose because a loaded machine delays timers.
  t.ok(firedAt <= base + 20 + 1_000, 'soon after the slice ends, not at some later time');
  t.match(first.reason, { name: 'DeadlineExceededError', code: 'deadline_exceeded' });
  t.equal(signals.timeOf(first), Math.ceil((base + 1) / 20) * 20, "a signal carries its time (its slice's end)");

  const cleared = signals.at(Date.now() + 30);
  signals.clear();
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.notOk(cleared.aborted, 'clear() stops the timers (the host closed)');
});
