// USSD in cluster mode through HTTP: three real server processes (ACTOR_THREADS=1) on a real 3-server NATS cluster,
// requests spread over the nodes as a load balancer without stickiness would. Same screens as one node, gateway
// retries through another node applied once, customer ids and the PIN lock counter cluster-wide, kill -9 of a node
// under load with nothing acknowledged lost, its restart, and a stale writer refused.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { DEFAULT_PARTITIONS, partitionOf } from '../dist/src/cluster/partition-leases.js';
import { JournalUssdSessionRepository } from '../dist/src/cluster/records/ussd/sessions.js';
import { isRevisionConflict } from '../dist/src/store/revision.js';
import { health, startTestNodes, until, type LocalNode } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { startTestServer } from './helpers/server.js';
import { GatewaySession, postUssd } from './helpers/ussd-gateway.js';

t.setTimeout(240_000);

const UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';
const PIN = '48207';
// The gateways are allow-listed (as in production): the cluster-wide rate limit would cost a quorum write per request.
const env = { RATE_LIMIT_ALLOWLIST: '127.0.0.1', OPERATOR_TOKEN: 'op', LOG_LEVEL: 'warn' };

const nats = await startTestNatsCluster(t);
const cluster = await startTestNodes(t, nats, { env });
const nodes = cluster.nodes;

/** A gateway session whose requests go wherever `pick` sends them (round-robin over the nodes by default). */
class Session extends GatewaySession {
  #next = 0;

  constructor(
    sessionId: string,
    readonly pick: (request: number) => string,
  ) {
    super('', sessionId, '+254700000001', '*384#');
  }

  /** The same text again, as a gateway retries, through the next node. */
  override resend(url = this.pick(this.#next++)): Promise<string> {
    return super.resend(url);
  }
}

const roundRobin = (list: readonly { url: string }[]) => (request: number) => list[request % list.length].url;
const customerIdIn = (screen: string) => /C[0-9A-F]{8}/.exec(screen)?.[0];
/** A full name for client `i` (names take letters only). */
const nameOf = (i: number) => `User ${String.fromCharCode(65 + (i % 26))}`;

/** Account creation, then a login, account details and log out: every screen, retries included, customer ids masked. */
async function script(
  prefix: string,
  pick: (request: number) => string,
): Promise<{ screens: string[]; retries: string[]; accounts: number }> {
  const create = new Session(`${prefix}-create`, pick);
  const retries: string[] = [];
  for (const input of [undefined, '2', '2', 'Amina Wanjiru']) await create.send(input);
  // A gateway retry of the same input (through the next node): the same screen, not applied again.
  retries.push(await create.resend());
  for (const input of ['00', PIN]) await create.send(input);
  const created = await create.send(PIN);
  retries.push(await create.resend(), await create.resend());
  const customerId = customerIdIn(created)!;
  const login = new Session(`${prefix}-login`, pick);
  for (const input of [undefined, '2', '1', customerId, PIN, '1', '0', '3']) await login.send(input);
  const accounts = new Set([created, ...retries.slice(1)].map(customerIdIn)).size;
  const mask = (screen: string) => screen.replaceAll(customerId, 'C########');
  return { screens: [...create.screens, ...login.screens].map(mask), retries: retries.map(mask), accounts };
}

t.test('the three nodes share the partitions and report the cluster store', async (t) => {
  const reports = await Promise.all(nodes.map(health));
  t.same(reports.map((r) => r.cluster.partitions.owned).sort(), [42, 43, 43], 'partitions split 43/43/42');
  for (const report of reports) {
    t.match(report, {
      status: 'ok',
      database: 'connected',
      cluster: { partitions: { total: 128 }, liveNodes: ['node-1', 'node-2', 'node-3'] },
    });
  }
});

t.test(
  "one session's steps round-robin over three nodes give the same screens as one node; retries apply once",
  async (t) => {
    const single = await startTestServer(t);
    // Sessions of their own: the one node's walk and the cluster's run at once.
    const [alone, spread] = await Promise.all([script('alone', () => single.url), script('spread', roundRobin(nodes))]);
    t.same(spread.screens, alone.screens, 'the same screens, step by step');
    t.equal(alone.screens.length, 15);
    t.match(spread.screens[6], /^CON Account created!\nYour customer ID: C########/);
    t.match(spread.screens.at(-1)!, /^END You are logged out/);
    t.same(spread.retries, alone.retries, 'retries through another node answer the same screens');
    t.equal(spread.retries[0], spread.screens[3], 'a retried input is not applied a second time');
    t.equal(spread.accounts, 1, 'the account-creating step retried through two other nodes made one account');
  },
);

t.test('customer ids are unique and the PIN lock counter holds across nodes', async (t) => {
  // Twelve accounts created at once, each step through the next node.
  const created = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => {
      const s = new Session(`uniq-${i}`, (request) => nodes[(request + i) % 3].url);
      for (const input of [undefined, '2', '2', nameOf(i), '00', PIN]) await s.send(input);
      return customerIdIn(await s.send(PIN))!;
    }),
  );
  t.equal(created.filter(Boolean).length, 12, 'twelve accounts created');
  t.equal(new Set(created).size, 12, 'twelve distinct customer ids');

  // Three wrong PINs, each in its own session, each session's steps spread over the nodes.
  const customerId = created[0];
  const attempt = async (i: number, pin: string) => {
    const s = new Session(`lock-${i}`, (request) => nodes[(request + i) % 3].url);
    for (const input of [undefined, '2', '1']) await s.send(input);
    return `${await s.send(customerId)}\n---\n${await s.send(pin)}`;
  };
  t.match(await attempt(0, '11112'), /Wrong PIN\. 2 attempts left/);
  t.match(await attempt(1, '11113'), /Wrong PIN\. 1 attempt left/);
  t.match(await attempt(2, '11114'), /Too many wrong PINs\. Account locked/);
  const locked = await attempt(3, PIN);
  t.match(locked, /Account locked\. Try again in 30 min/, 'a later dial through any node is told about the lock');
  t.notMatch(locked, /Hello/, 'even the right PIN does not log in while locked');
});

t.test(
  'kill -9 of a node under load: nothing acknowledged is lost, sessions continue, the node comes back',
  async (t) => {
    const victim = nodes[2];
    const survivors = nodes.slice(0, 2);
    let killedAt = Infinity;
    let stop = false;
    const acknowledged: { customerId: string; sessionId: string }[] = [];
    const failures: { startedAt: number; node: string; what: string }[] = [];
    const afterKill: number[] = [];
    const lastAcknowledged = new Map<string, { text: string; screen: string }>();
    const refusedByDeadNode = { count: 0 };

    /** One gateway request as a load balancer without stickiness makes it: the next node, any node. */
    const request = async (session: Session, input: string | undefined, turn: number) => {
      if (input !== undefined) session.inputs.push(input);
      for (let attempt = 0; ; attempt++) {
        const node = nodes[(turn + attempt) % 3];
        const startedAt = Date.now();
        let screen: string;
        try {
          screen = await session.resend(node.url);
        } catch {
          refusedByDeadNode.count++; // the dead node's port: the balancer tries the next node
          continue;
        }
        if (screen === UNAVAILABLE) {
          failures.push({ startedAt, node: node.nodeId, what: `${session.sessionId} "${session.text}"` });
          continue; // the gateway retries the same input
        }
        if (startedAt > killedAt) afterKill.push(Date.now() - startedAt);
        lastAcknowledged.set(session.sessionId, { text: session.text, screen });
        return screen;
      }
    };

    const client = async (c: number) => {
      for (let round = 0; !stop; round++) {
        const s = new Session(`load-${c}-${round}`, () => '');
        let turn = c + round;
        for (const input of [undefined, '2', '2', nameOf(c), '00', PIN]) await request(s, input, turn++);
        const screen = await request(s, PIN, turn++);
        const customerId = customerIdIn(screen);
        if (customerId) acknowledged.push({ customerId, sessionId: s.sessionId });
        else t.fail(`no account in ${JSON.stringify(screen)}`);
      }
    };
    const clients = Array.from({ length: 8 }, (_, c) => client(c));
    await until('some accounts', async () => (acknowledged.length >= 8 ? true : undefined));
    killedAt = Date.now();
    await victim.kill('SIGKILL');
    // Requests started before this may have been in flight on the victim; none started after it may fail.
    const diedAt = Date.now();
    const before = acknowledged.length;
    await until('accounts after the kill', async () => (acknowledged.length >= before + 16 ? true : undefined), 60_000);
    stop = true;
    await Promise.all(clients);

    const inFlightOnly = failures.filter((f) => f.startedAt > diedAt);
    t.same(inFlightOnly, [], 'no request started after the kill failed (only those in flight at the kill may)');
    // Why, when one did: the survivors' own account of the failed call.
    for (const node of inFlightOnly.length ? survivors : []) {
      for (const line of node
        .log()
        .split('\n')
        .filter((l) => l.includes('USSD actor failed')))
        t.comment(`${node.nodeId}: ${line.slice(0, 600)}`);
    }
    t.comment(
      `${acknowledged.length} accounts acknowledged, ${failures.length} requests failed (in flight at the kill: ${failures.map((f) => f.what).join(', ') || 'none'}), ${refusedByDeadNode.count} refused by the dead node's port`,
    );
    const bound = Math.max(0, ...afterKill);
    t.comment(
      `longest answer to a request started after the kill: ${bound} ms (the failover bound: dead node's partitions taken over)`,
    );
    t.ok(bound < 10_000, `sessions continue within 10 s (${bound} ms)`);

    // Every acknowledged account logs in through the survivors, and every session's last acknowledged step is there:
    // its retry answers the same screen.
    const logins = await Promise.all(
      acknowledged.map(async ({ customerId }, i) => {
        const s = new Session(`check-${i}`, roundRobin(survivors));
        for (const input of [undefined, '2', '1', customerId]) await s.send(input);
        return s.send(PIN);
      }),
    );
    t.equal(
      logins.filter((screen) => /^CON Hello User/.test(screen)).length,
      acknowledged.length,
      `all ${acknowledged.length} acknowledged accounts log in`,
    );
    const kept = await Promise.all(
      [...lastAcknowledged].map(async ([sessionId, { text, screen }]) => {
        const answer = await postUssd(survivors[0].url, {
          sessionId,
          serviceCode: '*384#',
          phoneNumber: '+254700000001',
          text,
        });
        return answer.body === screen;
      }),
    );
    t.equal(
      kept.filter(Boolean).length,
      kept.length,
      `every session's last acknowledged step is kept (${kept.length} sessions)`,
    );

    // The node comes back and takes its share again.
    await victim.restart();
    const shares = await until('the restarted node to take its share', async () => {
      const owned = (await Promise.all(nodes.map(health))).map((r) => r.cluster.partitions.owned);
      return owned[2] >= 42 && owned.reduce((a, b) => a + b) === 128 ? owned : undefined;
    });
    t.ok(shares[2] >= 42, `the restarted node owns ${shares[2]} partitions again (${shares.join('/')})`);
    t.same((await health(victim)).cluster.liveNodes, ['node-1', 'node-2', 'node-3']);
    const again = await script('after-restart', roundRobin(nodes));
    t.match(again.screens.at(-1)!, /^END You are logged out/, 'a session spread over all three nodes runs end to end');
  },
);

t.test(
  'a paused owner: its sessions move on without it, it rejoins from their new state, and an old revision cannot land',
  async (t) => {
    const connection = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'sar' }, 'test-observer');
    t.teardown(() => connection.nc.close());
    // A session whose partition node-3 holds (read from the lease table), so its actor runs there.
    const leases = await KvRecordStore.open<{ owner: string | null }>(connection, { name: 'leases' });
    const ownerOf = async (sessionId: string) =>
      (await leases.get(['partition', String(partitionOf(sessionId, 128))]))?.value.owner;
    let sessionId = '';
    for (let i = 0; !sessionId; i++) if ((await ownerOf(`paused-${i}`)) === 'node-3') sessionId = `paused-${i}`;
    const paused = nodes[2];
    const s = new Session(sessionId, roundRobin(nodes.slice(0, 2)));
    await s.send();
    await s.send('2');

    // node-3 stops (SIGSTOP: alive, holding the session's actor and its lease, doing nothing; NATS still delivers to it).
    await paused.kill('SIGSTOP');
    const stoppedAt = Date.now();
    t.equal(
      await s.send('2'),
      UNAVAILABLE,
      'a step that reached the paused owner fails (not retried: it may have run there)',
    );
    t.comment(
      `it failed after ${Date.now() - stoppedAt} ms, when the owner's lease lapsed (not at the call's deadline)`,
    );
    await until(
      'another node to take the partition',
      async () => ((await ownerOf(sessionId)) ?? 'node-3') !== 'node-3' || undefined,
    );
    // Each survivor judges node-3's lease by its own clock: the retry goes to whichever, so both must see it gone.
    for (const node of nodes.slice(0, 2))
      await until(
        `${node.nodeId} to see node-3 gone`,
        async () => !(await health(node)).cluster.liveNodes.includes('node-3') || undefined,
      );
    t.match(await s.resend(), /^CON .*full name/i, "the gateway's retry through another node moves the session on");
    await paused.kill('SIGCONT');
    await until('node-3 to rejoin', async () =>
      (await health(paused)).cluster.partitions.owned >= 42 ? true : undefined,
    );

    // Through node-3 again: it answers from the state the others wrote, not from what it held when it stopped.
    const resumed = new Session(sessionId, () => paused.url);
    resumed.inputs.push(...s.inputs);
    t.match(await resumed.send('Amina Wanjiru'), /^CON .*email/i, 'the resumed node continues from the newer state');

    // The write a stale owner would make: from the revision it read before the session moved on. Refused.
    const stale = await JournalUssdSessionRepository.open(connection, {
      maxLifetimeMs: 300_000,
      partitionOf: (id) => partitionOf(id, DEFAULT_PARTITIONS),
    });
    const held = (await stale.get(sessionId))!;
    await resumed.send('00');
    const write = stale.update({ ...held.value, screen: 'CON stale' }, held);
    t.ok(
      isRevisionConflict(
        await write.then(
          () => undefined,
          (error: unknown) => error,
        ),
      ),
      'a write from an old revision is refused (revision conflict)',
    );
    t.match(await resumed.resend(nodes[0].url), /^CON .*PIN/i, 'the session is where the cluster left it');
  },
);

t.test(
  "ussd_sessions_active: every node reports the whole cluster's live sessions (counted on the front door)",
  async (t) => {
    const scrape = async (node: LocalNode) => {
      const text = await (await fetch(`${node.url}/metrics`, { headers: { authorization: 'Bearer op' } })).text();
      return Number(/^ussd_sessions_active (\d+)/m.exec(text)?.[1]);
    };
    // The first scrape starts each node's read of the sessions journal (none runs between scrapes) and may count 0.
    const counts = await until('the nodes to agree', async () => {
      const seen = await Promise.all(nodes.map(scrape));
      return seen[0] > 0 && seen.every((n) => n === seen[0]) ? seen : undefined;
    });
    t.ok(counts[0] > 30, `the same count on every node (${counts.join('/')}), the sessions of this file's load`);
  },
);

t.test(
  'the sessions journal: each node counts its appends, the records they carried and its partition loads',
  async (t) => {
    const sample = (text: string, name: string) =>
      Number(new RegExp(`^${name}\\{journal="ussd"\\} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    for (const node of nodes) {
      // Host counters reach the main thread's registry within a report interval (1 s).
      const text = await until(`${node.nodeId}'s journal counters`, async () => {
        const body = await (await fetch(`${node.url}/metrics`, { headers: { authorization: 'Bearer op' } })).text();
        return sample(body, 'cluster_journal_appends_total') > 0 ? body : undefined;
      });
      const appends = sample(text, 'cluster_journal_appends_total');
      const records = sample(text, 'cluster_journal_records_total');
      t.ok(records >= appends, `${node.nodeId}: ${records} steps in ${appends} fsynced appends`);
      t.ok(
        sample(text, 'cluster_journal_partition_loads_total') > 0,
        `${node.nodeId}: loaded the partitions it serves`,
      );
    }
  },
);
