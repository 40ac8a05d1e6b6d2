// One deadline across the node link: a call's deadline (runtime/deadline-signals.ts) travels to the owner node,
// which runs the call under it, and the caller is answered at it with its DeadlineExceededError wherever the call
// stalled; the router retries a call nobody answers on the next owner only inside what is left of that deadline.
// The USSD face gives a step that one deadline and answers it once, with the contract's END text. Real NATS (one
// server of a test cluster, so interest needs no route to cross); the nodes' lease tables are stand-ins that name
// the owner the test chooses, and each owner's local runtime a stand-in that records the deadline it was given.
import { EventEmitter } from 'node:events';
import t from 'tap';
import type { Test } from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { NatsActorRouter } from '../dist/src/cluster/nats-router.js';
import { partitionOf, type PartitionLeases } from '../dist/src/cluster/partition-leases.js';
import { deadlineIn } from '../dist/src/runtime/deadline-signals.js';
import { DeadlineExceededError, HostUnavailableError } from '../dist/src/runtime/errors.js';
import type { HttpRequest } from '../dist/src/http/types.js';
import { createLogger } from '../dist/src/base/log.js';
import { ussdServiceSessionsEnded } from '../dist/src/metrics/catalogue.js';
import { actorsOver, type ActorRouter } from '../dist/src/runtime/router.js';
import { SERVICE_UNAVAILABLE } from '../dist/src/ussd/answers.js';
import type { DialMessage } from '../dist/src/ussd/protocol.js';
import { failedStep, stepOf } from '../dist/src/ussd/routes/dial.js';
import type { UssdRouteDeps } from '../dist/src/ussd/routes/index.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

t.setTimeout(60_000);
const nats = await startTestNatsCluster(t);
const PARTITIONS = 16;
const ACTOR = 'deadline-actor';
const PARTITION = partitionOf(ACTOR, PARTITIONS);

/** A node's lease table: it holds PARTITION while `holds`; every node's table names `owner.id` as its owner. */
function table(nodeId: string, owner: { id: string }, holds = false) {
  const leases = Object.assign(new EventEmitter(), {
    nodeId,
    partitions: PARTITIONS,
    owned: new Set(holds ? [PARTITION] : []),
    owns: (partition: number) => partition === PARTITION && leases.owned.has(partition),
    ownerOf: () => owner.id,
    isLive: () => true,
    liveNodes: () => [owner.id, nodeId],
    linkOf: () => undefined,
  });
  return leases;
}

/** What an owner's local runtime was given: the deadline signal of each call, and when it fired with what. */
interface Seen {
  calls: number;
  abortedAfterMs?: number;
  reason?: unknown;
  /** Settles when the deadline of a call fired on this side (awaited, not slept on: a loaded machine is late). */
  aborted: Promise<void>;
}

/** A node whose local runtime answers `answer` (never, when undefined: a stalled actor) and records its deadline. */
async function node(t: Test, id: string, leases: ReturnType<typeof table>, answer?: string, failoverWaitMs?: number) {
  const connection = await connectCluster({ NATS_URL: [nats.servers[0].url], NATS_PREFIX: 'dl' }, id);
  let aborted = () => {};
  const seen: Seen = { calls: 0, aborted: new Promise<void>((resolve) => (aborted = resolve)) };
  const local = {
    send: (_kind: string, _id: string, _message: unknown, deadline: AbortSignal) => {
      seen.calls++;
      const started = performance.now();
      deadline.addEventListener('abort', () => {
        seen.abortedAfterMs = performance.now() - started;
        seen.reason = deadline.reason;
        aborted();
      });
      return answer === undefined ? new Promise(() => {}) : Promise.resolve(answer);
    },
    signal: async () => undefined,
  } as unknown as ActorRouter;
  const router = new NatsActorRouter({
    connection,
    leases: leases as unknown as PartitionLeases,
    local,
    ...(failoverWaitMs === undefined ? {} : { failoverWaitMs }),
  });
  t.teardown(async () => {
    router.close();
    await connection.close();
  });
  await connection.nc.flush();
  return { router, seen, leases };
}

const elapsed = async (call: Promise<unknown>): Promise<{ value?: unknown; error?: unknown; ms: number }> => {
  const started = performance.now();
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return { ...outcome, ms: performance.now() - started };
};

t.test(
  'a call forwarded to a stalled owner is answered at its deadline; the owner ran it under the same',
  async (t) => {
    const owner = { id: 'stalled-owner' };
    const stalled = await node(t, owner.id, table(owner.id, owner, true));
    const caller = await node(t, 'caller', table('caller', owner));
    const { error, ms } = await elapsed(caller.router.send('kind', ACTOR, { n: 1 }, deadlineIn(800)));
    t.ok(error instanceof DeadlineExceededError, 'the deadline is the reason');
    t.match(error, { code: 'deadline_exceeded', retryAfterSeconds: 1 });
    // The bound tells the deadline from the 5 s grace that came after it once, with room for a loaded machine.
    t.ok(ms >= 790 && ms < 1_800, `answered at the deadline (${ms.toFixed(0)} ms of 800), no grace after it`);
    t.equal(stalled.seen.calls, 1, 'the owner ran it once: a call that may have run is not retried elsewhere');
    await stalled.seen.aborted;
    t.ok(stalled.seen.reason instanceof DeadlineExceededError, "the owner's deadline fired, with the same reason");
    t.ok(
      stalled.seen.abortedAfterMs !== undefined && stalled.seen.abortedAfterMs < 1_800,
      `at the caller's deadline, on the owner's side (${stalled.seen.abortedAfterMs?.toFixed(0)} ms after it began)`,
    );
  },
);

t.test('nobody answers: the router retries on the next owner inside the deadline', async (t) => {
  const owner = { id: 'gone-owner' };
  const next = await node(t, 'next-owner', table('next-owner', owner), 'ran on next-owner');
  const caller = await node(t, 'caller', table('caller', owner), undefined, 10_000);
  // The table names the next owner 300 ms into the call; it subscribes then (its claim acknowledged).
  setTimeout(() => {
    owner.id = 'next-owner';
    next.leases.owned.add(PARTITION);
    next.leases.emit('change', next.leases.owned);
    caller.leases.emit('table');
  }, 300);
  const { value, ms } = await elapsed(caller.router.send('kind', ACTOR, { n: 2 }, deadlineIn(3_000)));
  t.equal(value, 'ran on next-owner', 'answered by the next owner');
  t.ok(ms >= 290 && ms < 2_000, `within the deadline (${ms.toFixed(0)} ms of 3000)`);
  t.equal(next.seen.calls, 1);
});

t.test('nobody answers and no owner comes: the deadline bounds the failover wait', async (t) => {
  const owner = { id: 'gone-owner' };
  const caller = await node(t, 'caller', table('caller', owner), undefined, 10_000);
  const { error, ms } = await elapsed(caller.router.send('kind', ACTOR, { n: 3 }, deadlineIn(600)));
  t.ok(error instanceof DeadlineExceededError, 'the deadline, not the failover wait (10 s), ends it');
  t.ok(ms >= 590 && ms < 2_500, `at the deadline (${ms.toFixed(0)} ms of 600)`);
  // A shorter failover budget than the deadline is the router's own answer, before the deadline.
  const impatient = await node(t, 'impatient', table('impatient', owner), undefined, 200);
  const early = await elapsed(impatient.router.send('kind', ACTOR, { n: 4 }, deadlineIn(3_000)));
  t.ok(early.error instanceof HostUnavailableError, 'no node answers: HostUnavailableError');
  t.ok(early.ms >= 190 && early.ms < 1_500, `after the failover budget (${early.ms.toFixed(0)} ms of 200)`);
});

t.test('a USSD step whose owner stalls answers the END text once, at USSD_STEP_TIMEOUT_MS', async (t) => {
  const owner = { id: 'stalled-owner' };
  const stalled = await node(t, owner.id, table(owner.id, owner, true));
  const caller = await node(t, 'front-door', table('front-door', owner));
  const deps = {
    actors: actorsOver(caller.router, { onEvent: () => () => {} }),
    log: createLogger('silent'),
    stepTimeoutMs: 700,
  } as unknown as UssdRouteDeps;
  const dial: DialMessage = {
    type: 'dial',
    sessionId: ACTOR,
    phoneNumber: '+254700000001',
    serviceCode: '*9#',
    text: '',
  };
  const timedOut = ussdServiceSessionsEnded.with('unknown', 'unknown', 'timeout');
  const before = timedOut.value;
  const { value: screen, ms } = await elapsed(
    stepOf(deps, dial, undefined).catch((err: unknown) =>
      failedStep(deps, err, dial, { requestId: 'r' } as HttpRequest),
    ),
  );
  t.equal(screen, SERVICE_UNAVAILABLE, "the contract's unavailable text");
  t.ok(ms >= 690 && ms < 1_800, `at the step's deadline (${ms.toFixed(0)} ms of 700), not a grace later`);
  t.equal(timedOut.value - before, 1, 'counted once, as a timeout');
  await stalled.seen.aborted;
  t.ok(stalled.seen.reason instanceof DeadlineExceededError, "the owner's work was aborted with the same reason");
});
