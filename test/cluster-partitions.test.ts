// Partitions, not only deaths: 3 nats-servers and 3 nodes, each a host of its own (a network namespace on one
// bridge; test/helpers/netns.ts), this process the gateway and load balancer on the same bridge. Under a steady
// load of USSD account creations spread over the nodes (a request answered "unavailable" is retried through the
// next node, as a gateway's retry through a balancer would be) and of chat turns, each paid with a credit (two
// sessions of one user per scenario streaming turns through the nodes in turn; test/helpers/chat-load.ts), one
// fault at a time is made and healed:
//   a node cut from every NATS server (clients still reach it); the JetStream meta leader cut off entirely; one
//   NATS server cut from the other two (the nodes still reach it); a one-way link (a server's packets to its peers
//   dropped, theirs to it delivered); a flapping link (a server's port down and up every second); the sessions
//   stream's leader paused (SIGSTOP).
// After each: no acknowledged account lost (each logs in), no customer id given twice, no request hung past the
// stated bound (an isolated node answers the END text within it), the cluster answering again soon after the heal;
// every acknowledged chat turn (done "finished") in its session's history exactly once, no refused (402) one in it,
// no more turns accepted than the user's credits and the balance down by exactly the accepted ones (give or take
// the turns whose outcome the client never learnt). One cluster serves every scenario (each heals fully first).
import t, { type Test } from 'tap';
import { connectCluster, type ClusterConnection } from '../dist/src/cluster/connection.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { startLocalNodes, type LocalNode } from '../dist/src/tools/local-nodes.js';
import { startNatsCluster, type NatsCluster } from '../dist/src/tools/local-nats-cluster.js';
import { parseKey } from '../dist/src/oracle/auth/mint.js';
import { chatLoad, checkChat } from './helpers/chat-load.js';
import { until } from './helpers/cluster-nodes.js';
import { ensureNatsServer } from './helpers/nats-cluster.js';
import { createNet } from './helpers/netns.js';
import { sessionJournal } from './helpers/session-journal.js';
import { postUssd } from './helpers/ussd-gateway.js';

t.setTimeout(240_000);

const UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';
const PIN = '48207';
/** Each node's USSD step deadline (USSD_STEP_TIMEOUT_MS): the END text answers a step not done by then. */
const STEP_TIMEOUT_MS = 5_000;
/** The longest any single request may take, isolated node included: the deadline and the busy machine's slack. */
const ANSWER_BOUND_MS = STEP_TIMEOUT_MS + 1_500;
/** How soon after a heal the healed part answers again. */
const RECOVERY_BOUND_MS = 10_000;
/** How long the accounts' logins after a scenario may take in all, every node tried in turn. */
const LOGIN_BOUND_MS = 45_000;
/** How long a fault is held (unless its scenario waits for what the fault must bring about). */
const FAULT_MS = 6_000;
/** Each scenario's chat user starts with these; a turn costs one, so the later turns of a scenario may be refused. */
const CREDITS = 8;

const net = createNet(t, 6);
const natsHosts = net.hosts.slice(0, 3);
const nats: NatsCluster = await startNatsCluster({ binary: ensureNatsServer(), hosts: natsHosts, name: 'part' });
t.teardown(() => nats.stop());
const cluster = await startLocalNodes({
  natsUrl: nats.urls,
  natsMonitorUrl: nats.monitorUrls,
  hosts: net.hosts.slice(3),
  env: {
    ACTOR_THREADS: '1',
    LOG_LEVEL: 'warn',
    // Nothing sends to the nodes once the scenarios are over: teardown stops them without a quiet second.
    SHUTDOWN_QUIET_MS: '0',
    RATE_LIMIT_ALLOWLIST: `${net.tester}/32`,
    USSD_STEP_TIMEOUT_MS: String(STEP_TIMEOUT_MS),
    CREDITS_ENABLED: 'true',
    CREDITS_INITIAL: String(CREDITS),
    CREDITS_PER_MESSAGE: '1',
    // No chain: a target never dialled (no request reaches the gateway) instead of an embedded query node, and the
    // bundled descriptors instead of asking it for reflection. Each node starts seconds sooner on a busy machine.
    GATEWAY_GRPC_TARGET: '127.0.0.1:9',
    GATEWAY_DESCRIPTORS: 'bundled',
  },
});
t.teardown(() => cluster.stop());
const nodes = cluster.nodes;
const oracleDid = parseKey(cluster.keys.ORACLE_PRIVATE_KEY).did();
const observer: ClusterConnection = await connectCluster(
  { NATS_URL: nats.urls.split(','), NATS_PREFIX: 'sar' },
  'test-observer',
);
t.teardown(() => observer.nc.close());

interface Attempt {
  node: string;
  startedAt: number;
  ms: number;
  outcome: 'ok' | 'unavailable' | 'error';
  /** The request's text and the start of the screen answered (for a failure message). */
  text?: string;
  screen?: string;
}

/** An account's creation: each input of a session, and what the screen answering it must say. */
const CREATION: readonly { input: string | ((c: number) => string); screen: RegExp }[] = [
  { input: '', screen: /^CON Welcome!/ },
  { input: '2', screen: /^CON Account Menu/ },
  { input: '2', screen: /^CON Enter your full name:/ },
  { input: (c) => `User ${String.fromCharCode(65 + c)}`, screen: /^CON Enter your email address, or 00 to skip:/ },
  { input: '00', screen: /^CON Choose a 5-digit PIN:/ },
  { input: PIN, screen: /^CON Enter the same PIN again to confirm:/ },
  { input: PIN, screen: /^CON Account created!/ },
];

const customerIdIn = (screen: string) => /C[0-9A-F]{8}/.exec(screen)?.[0];
const allCustomerIds: string[] = [];

/** One request of a gateway session through the balancer: node after node until one answers a screen. */
async function step(
  sessionId: string,
  text: string,
  first: number,
  attempts: Attempt[],
  stopped = () => false,
): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    if (stopped()) throw new Error(`${sessionId}: stopped while no node answered`);
    const node = nodes[(first + attempt) % nodes.length];
    const startedAt = Date.now();
    const answer = await postUssd(
      node.url,
      { sessionId, serviceCode: '*384#', phoneNumber: '+254700000009', text },
      false,
      ANSWER_BOUND_MS * 2,
    ).catch(() => undefined);
    const outcome =
      answer === undefined || answer.status !== 200 ? 'error' : answer.body === UNAVAILABLE ? 'unavailable' : 'ok';
    const screen = answer?.body.slice(0, 48);
    attempts.push({ node: node.nodeId, startedAt, ms: Date.now() - startedAt, outcome, text, screen });
    if (outcome === 'ok') return answer!.body;
    if (attempt % nodes.length === nodes.length - 1) await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Clients creating accounts until `stop()`; returns the acknowledged customer ids and every attempt. */
function load(label: string, clients = 6) {
  let stopped = false;
  const acknowledged: string[] = [];
  const attempts: Attempt[] = [];
  /** Sessions with a step answered something else than what follows on from the steps before. */
  const wrong: { sessionId: string; summary: string }[] = [];
  const client = async (c: number) => {
    for (let round = 0; !stopped; round++) {
      const sessionId = `${label}-${c}-${round}`;
      const inputs: string[] = [];
      /** This session's requests, for a failure message. */
      const mine: Attempt[] = [];
      let turn = c + round;
      const until = () => stopped;
      for (const [k, { input, screen: expected }] of CREATION.entries()) {
        if (k > 0) inputs.push(typeof input === 'string' ? input : input(c));
        const before = mine.length;
        let screen: string;
        try {
          screen = await step(sessionId, inputs.join('*'), turn++, mine, until);
        } finally {
          attempts.push(...mine.slice(before));
        }
        const customerId = k === CREATION.length - 1 ? customerIdIn(screen) : undefined;
        if (customerId) acknowledged.push(customerId);
        if (expected.test(screen) && (customerId || k < CREATION.length - 1)) continue;
        // The session does not follow on from its acknowledged steps: what each request was answered, by which
        // node (the journal's records of the session are added once the scenario is over).
        const requests = mine.map(
          (a) => `${a.node} ${a.outcome} after ${a.ms} ms: ${JSON.stringify(a.text)} -> ${JSON.stringify(a.screen)}`,
        );
        wrong.push({
          sessionId,
          summary: `step ${k} answered ${JSON.stringify(screen)}, not ${expected}; its requests:\n    ${requests.join('\n    ')}`,
        });
        break;
      }
    }
  };
  // A client stopped in the middle of a session (the cluster not answering at all) ends without an account.
  const running = Promise.all(Array.from({ length: clients }, (_, c) => client(c).catch(() => undefined)));
  return {
    acknowledged,
    attempts,
    wrong,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/**
 * Every acknowledged account logs in (through every node in turn); none was given twice. A login whose session no
 * node serves within LOGIN_BOUND_MS fails by name (with what each node answered and logged) instead of holding the
 * file until its timeout: seen twice, once in server-split and once in one-way, not understood yet.
 */
async function checkHistory(t: Test, label: string, acknowledged: string[]) {
  allCustomerIds.push(...acknowledged);
  t.equal(
    new Set(allCustomerIds).size,
    allCustomerIds.length,
    `${label}: no customer id given twice (${allCustomerIds.length} so far)`,
  );
  const gaveUpAt = Date.now() + LOGIN_BOUND_MS;
  const gaveUp = () => Date.now() > gaveUpAt;
  const stuck: string[] = [];
  /** Logins answered with another screen than the account's menu: which, on which node, after which steps. */
  const refused: string[] = [];
  const logins = await Promise.all(
    acknowledged.map(async (customerId, i) => {
      const attempts: Attempt[] = [];
      const sessionId = `${label}-check-${i}`;
      const inputs = ['2', '1', customerId, PIN];
      try {
        await step(sessionId, '', i, attempts, gaveUp);
        let screen = '';
        for (let k = 1; k <= inputs.length; k++)
          screen = await step(sessionId, inputs.slice(0, k).join('*'), i + k, attempts, gaveUp);
        if (/^CON Hello User/.test(screen)) return true;
        const steps = attempts.map((a) => `${a.node} ${a.outcome} ${a.ms} ms "${a.text}" -> ${a.screen}`);
        refused.push(`${sessionId} (${customerId}) answered ${JSON.stringify(screen)}; steps: ${steps.join('; ')}`);
        return false;
      } catch {
        const last = attempts.slice(-6).map((a) => `${a.node} ${a.outcome} ${a.ms} ms`);
        stuck.push(`${sessionId} (${customerId}): ${attempts.length} attempts, the last: ${last.join(', ')}`);
        return false;
      }
    }),
  );
  const table = stuck.length > 0 ? await leaseTable() : '';
  if (stuck.length > 0) {
    for (const line of stuck) t.comment(`${label}: no node served ${line}`);
    for (const node of nodes) t.comment(`${label}: ${node.nodeId}'s last log lines:\n${node.log().slice(-4_000)}`);
    t.comment(`${label}: ${table}`);
  }
  t.equal(
    logins.filter(Boolean).length,
    acknowledged.length,
    `${label}: all ${acknowledged.length} acknowledged accounts log in`,
    { said: [...refused, ...stuck.map((line) => `no node served ${line}`), table].filter(Boolean).join('\n') },
  );
}

/**
 * For a failure message: the lease table as the stream leader has it (each node's heartbeat age, the partitions with
 * no live owner) and each node's own view (/health: partitions owned, NATS).
 */
async function leaseTable(): Promise<string> {
  try {
    const store = await KvRecordStore.open<{ node?: string; renewedAt?: number; owner?: string | null }>(observer, {
      name: 'leases',
    });
    const records = await store.all([]);
    const beats = records.filter((r) => r.key[0] === 'node');
    const live = new Set(beats.filter((r) => Date.now() - (r.value.renewedAt ?? 0) < 3_000).map((r) => r.key[1]));
    const orphans = records
      .filter((r) => r.key[0] === 'partition' && !live.has(r.value.owner ?? ''))
      .map((r) => `${r.key[1]}:${r.value.owner ?? 'free'}@${r.revision}`);
    const views = await Promise.all(
      nodes.map(async (node) => {
        const health = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(2_000) })
          .then((answer) => answer.json() as Promise<{ cluster?: unknown }>)
          .catch((error: Error) => ({ cluster: error.message }));
        return `${node.nodeId} ${JSON.stringify(health.cluster)}`;
      }),
    );
    const ages = beats.map((r) => `${r.key[1]} ${Date.now() - (r.value.renewedAt ?? 0)} ms ago @${r.revision}`);
    return `heartbeats: ${ages.join(', ')}; partitions without a live owner: ${orphans.join(' ') || 'none'}; views: ${views.join(' | ')}`;
  } catch (error) {
    return `the lease table could not be read: ${(error as Error).message}`;
  }
}

/**
 * Runs the load, makes the fault once some accounts went through, holds it (FAULT_MS, or until `hold` resolves),
 * heals (and, given `watched`, times how soon after the heal that node answers a fresh dial, the load still
 * running), and waits for the cluster to create accounts again; returns what the load saw.
 */
async function scenario(
  t: Test,
  label: string,
  fault: () => Promise<void> | void,
  heal: () => Promise<void> | void,
  watched?: LocalNode,
  hold: () => Promise<unknown> = () => new Promise((resolve) => setTimeout(resolve, FAULT_MS)),
) {
  const running = load(label);
  const chat = await chatLoad(nodes, oracleDid, label);
  let faultAt = 0;
  let healedAt = 0;
  let back: number | undefined;
  try {
    await until(
      `${label}: accounts before the fault`,
      async () => (running.acknowledged.length >= 3 && chat.finished() >= 1 ? true : undefined),
      30_000,
    );
    faultAt = Date.now();
    await fault();
    await hold();
    const during = running.acknowledged.length;
    await heal();
    healedAt = Date.now();
    if (watched) back = await answersAgain(watched, healedAt);
    await until(
      `${label}: accounts after the heal`,
      async () => (running.acknowledged.length >= during + 6 ? true : undefined),
      30_000,
    );
  } finally {
    // Whatever happened, the fault is undone and the load ends, so the next scenario starts from a whole cluster.
    await heal();
    await Promise.all([running.stop(), chat.stop()]);
  }
  const slowest = running.attempts.reduce((max, a) => (a.ms > max.ms ? a : max), running.attempts[0]);
  const failed = running.attempts.filter((a) => a.outcome !== 'ok');
  t.comment(
    `${label}: ${running.acknowledged.length} accounts, ${running.attempts.length} requests, ${failed.length} answered unavailable or failed ` +
      `(${[...new Set(failed.map((a) => a.node))].join(', ') || 'none'}), slowest ${slowest.ms} ms on ${slowest.node} (${slowest.outcome})`,
  );
  t.ok(
    slowest.ms <= ANSWER_BOUND_MS,
    `${label}: every request answered within ${ANSWER_BOUND_MS} ms (slowest ${slowest.ms} ms, ${slowest.outcome})`,
  );
  t.notOk(
    running.attempts.some((a) => a.outcome === 'error'),
    `${label}: every answer was a screen or the END text (no error, no hang)`,
  );
  // Once seen under a node cut before requests carried their deadline: an old step, held by the isolated node's
  // NATS client and delivered on reconnect, ran on the owner and moved its session back one step. Seen once since,
  // in meta-cut (a full-suite run): the last PIN answered "That email address is not valid". Each step's screen is
  // now checked, so a failure names the first step that did not follow on, with the journal's records.
  for (const { sessionId, summary } of running.wrong)
    t.comment(`${label}: ${sessionId} did not follow on: ${summary}\n${await sessionJournal(observer, sessionId)}`);
  t.same(
    running.wrong.map((w) => w.sessionId),
    [],
    `${label}: every session's steps follow on from its acknowledged ones`,
  );
  // The accounts' logins and the chat histories are read at once (neither writes what the other reads).
  await Promise.all([
    checkHistory(t, label, running.acknowledged),
    checkChat(t, label, chat, nodes, observer, CREDITS),
  ]);
  return { faultAt, healedAt, back, attempts: running.attempts };
}

/** Until `node` answers a fresh dial with a menu; how long that took from `since`. */
async function answersAgain(node: LocalNode, since: number): Promise<number> {
  await until(
    `${node.nodeId} to answer again`,
    async () => {
      const answer = await postUssd(
        node.url,
        {
          sessionId: `again-${node.nodeId}-${Date.now()}`,
          serviceCode: '*384#',
          phoneNumber: '+254700000009',
          text: '',
        },
        false,
        5_000,
      );
      return answer.body.startsWith('CON ') ? true : undefined;
    },
    60_000,
  );
  return Date.now() - since;
}

const metaLeader = async () => nats.waitForMetaLeader();

/** The meta leader both servers but `cut` name, once they agree on one that is not `cut`. */
async function electedWithout(cut: number): Promise<string | undefined> {
  const leaders = await Promise.all(
    nats.monitorUrls
      .split(',')
      .filter((_, i) => i !== cut)
      .map(async (url) => {
        const jsz = await fetch(`${url}/jsz`, { signal: AbortSignal.timeout(1_000) })
          .then((answer) => answer.json() as Promise<{ meta_cluster?: { leader?: string } }>)
          .catch(() => undefined);
        return jsz?.meta_cluster?.leader;
      }),
  );
  const [first] = leaders;
  return first && first !== nats.servers[cut].name && leaders.every((leader) => leader === first) ? first : undefined;
}
const serverIndex = (name: string) => nats.servers.findIndex((server) => server.name === name);

t.test(
  'a node cut from every NATS server: its requests end at once with the END text, it answers again after the heal',
  async (t) => {
    const isolated = 2;
    const { back, attempts } = await scenario(
      t,
      'node-cut',
      () => {
        for (const s of natsHosts.keys()) net.block(3 + isolated, s), net.block(s, 3 + isolated);
      },
      () => net.healAll(),

      nodes[isolated],
    );
    const onIsolated = attempts.filter((a) => a.node === nodes[isolated].nodeId && a.outcome === 'unavailable');
    t.ok(
      onIsolated.length > 0,
      `requests reached the isolated node and were answered unavailable (${onIsolated.length})`,
    );
    t.comment(`isolated node: slowest unavailable answer ${Math.max(0, ...onIsolated.map((a) => a.ms))} ms`);
    t.ok(back! <= RECOVERY_BOUND_MS, `the isolated node answers again ${back} ms after the heal`);
  },
);

t.test('the JetStream meta leader cut off: the others elect a new one, sessions go on', async (t) => {
  const leader = serverIndex(await metaLeader());
  let elected: string | undefined;
  // Held until the other two elect a meta leader (4-9 s, nats-server's election timeout), so the heal always meets
  // a cut server that still believes it leads.
  const { back } = await scenario(
    t,
    'meta-cut',
    () => net.cut(leader),
    () => net.healAll(),
    nodes[0],
    async () => (elected = await until('the others to elect a meta leader', () => electedWithout(leader), 30_000)),
  );
  t.ok(elected, `while ${nats.servers[leader].name} was cut off, the others elected ${elected}`);
  await nats.waitForMetaLeader(60_000);
  t.comment(
    `meta leader ${nats.servers[leader].name} was cut; after the heal the cluster agrees on ${await metaLeader()}`,
  );
  t.ok(back! <= RECOVERY_BOUND_MS, `answering again ${back} ms after the heal`);
});

t.test('one NATS server cut from the other two (the nodes still reach it)', async (t) => {
  const lone = (serverIndex(await metaLeader()) + 1) % 3;
  const others = [0, 1, 2].filter((s) => s !== lone);
  await scenario(
    t,
    'server-split',
    () => {
      for (const s of others) net.block(lone, s), net.block(s, lone);
    },
    () => net.healAll(),
  );
  await nats.waitForMetaLeader(60_000);
});

t.test("a one-way link: a server's packets to its peers are dropped, theirs reach it", async (t) => {
  const oneWay = serverIndex(await metaLeader());
  await scenario(
    t,
    'one-way',
    () => {
      for (const s of [0, 1, 2]) if (s !== oneWay) net.block(oneWay, s);
    },
    () => net.healAll(),
  );
  await nats.waitForMetaLeader(60_000);
});

t.test("a flapping link: a NATS server's port goes down and up every second", async (t) => {
  let flapping: NodeJS.Timeout | undefined;
  const flapper = (serverIndex(await metaLeader()) + 2) % 3;
  await scenario(
    t,
    'flap',
    () => {
      let down = false;
      flapping = setInterval(() => ((down = !down) ? net.cut(flapper) : net.healAll()), 1_000);
    },
    () => {
      clearInterval(flapping);
      net.healAll();
    },
  );
  await nats.waitForMetaLeader(60_000);
});

t.test("the sessions stream's leader paused (SIGSTOP), then resumed", async (t) => {
  const info = await observer.jsm.streams.info('sar_journal_ussd');
  const leader = serverIndex(info.cluster!.leader!);
  const pid = nats.servers[leader].pid!;
  await scenario(
    t,
    'paused-leader',
    () => void process.kill(pid, 'SIGSTOP'),
    () => void process.kill(pid, 'SIGCONT'),
  );
  const after = await observer.jsm.streams.info('sar_journal_ussd');
  t.comment(`stream leader ${info.cluster!.leader} was paused; now ${after.cluster?.leader}`);
});
