// Start-up of a node against NATS that is not all there: with one of three servers down (the first one it is
// given), a node of an existing deployment starts and restarts; started before NATS, it waits with backoff, answering /health 503 with the
// reason (NATS not reachable, then JetStream without a quorum), / (liveness) 200 and USSD the END text, and becomes healthy once a
// quorum is back. And a node refuses (exit 78) servers that acknowledge before fsyncing, unless told to accept it.
import t from 'tap';
import { startLocalNodes } from '../dist/src/tools/local-nodes.js';
import { startNatsCluster } from '../dist/src/tools/local-nats-cluster.js';
import { freePorts } from '../dist/src/tools/local-processes.js';
import { startTestNodes, until } from './helpers/cluster-nodes.js';
import { ensureNatsServer, startTestNatsCluster } from './helpers/nats-cluster.js';

// The two tests share nothing (each its own NATS servers, nodes, ports and data dirs) and spend their time waiting on
// NATS (elections, a server's restart): they run side by side.
t.jobs = 2;

const ussd = (url: string, sessionId: string, text = '') =>
  fetch(`${url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, serviceCode: '*384#', phoneNumber: '+254700000003', text }),
    signal: AbortSignal.timeout(10_000),
  });

t.test('a node starts, restarts and waits while NATS is degraded or away', async (t) => {
  const nats = await startTestNatsCluster(t);
  // The deployment's buckets exist (a new R3 bucket cannot be placed while a server is missing): the node's first run.
  const { nodes, keys } = await startTestNodes(t, nats, { count: 1 });
  const node = nodes[0];
  t.match(await (await ussd(node.url, `degraded-${Date.now()}`)).text(), /^CON /, 'with every server up, it answers');

  // NATS maintenance: n1, the first server in NATS_URL, goes down; the node is (re)started meanwhile, twice.
  await nats.kill(0);
  await node.restart();
  t.match(
    await (await ussd(node.url, `degraded-start-${Date.now()}`)).text(),
    /^CON /,
    'started with n1 down, it answers',
  );
  await node.restart();
  t.match(
    await (await ussd(node.url, `degraded-restart-${Date.now()}`)).text(),
    /^CON /,
    'restarted with n1 still down, it answers',
  );
  await node.kill('SIGTERM');

  // Every server down: a node started now waits for NATS.
  await Promise.all([1, 2].map((i) => nats.kill(i)));
  const [port] = await freePorts(1);
  const started = startLocalNodes({
    natsUrl: nats.urls,
    natsMonitorUrl: nats.monitorUrls,
    count: 1,
    ports: [port],
    nodeIdPrefix: 'early-',
    keys, // the deployment's keys: a node with others is refused (its records were written with these)
    env: { ACTOR_THREADS: '1', SHUTDOWN_QUIET_MS: '0' },
  });
  started.catch(() => undefined);
  const url = `http://127.0.0.1:${port}`;
  const waiting = await until(
    'the waiting node to answer /health',
    async () => {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      const body = (await response.json()) as { status: string; starting?: string };
      // The first answers may come before the first attempt failed.
      return body.starting?.includes('cannot connect') ? { status: response.status, body } : undefined;
    },
    60_000,
  );
  t.equal(waiting.status, 503, '/health answers 503 while NATS is away');
  t.equal(waiting.body.status, 'error');
  t.match(waiting.body.starting, /cannot connect to NATS/, '/health says what it waits for');
  const live = await fetch(`${url}/`, { signal: AbortSignal.timeout(2_000) });
  t.equal(live.status, 200, 'while / (liveness) answers 200: the process is alive, a probe must not restart it');
  t.match(await live.json(), { status: 'ok', message: /starting: cannot connect to NATS/ });
  const probes = await Promise.all(
    ['/', '/health'].map((path) => fetch(`${url}${path}`, { method: 'HEAD', signal: AbortSignal.timeout(2_000) })),
  );
  t.same(
    probes.map((response) => response.status),
    [200, 503],
    'HEAD answers as GET',
  );
  const step = await ussd(url, `early-${Date.now()}`);
  t.equal(step.status, 200, 'a USSD step is answered at once');
  t.equal(
    await step.text(),
    'END Service temporarily unavailable. Please try again later.',
    'with the END text a gateway expects',
  );
  const other = await fetch(`${url}/messages`, { method: 'POST', signal: AbortSignal.timeout(5_000) });
  t.equal(other.status, 503, 'any other request: 503');
  t.ok(Number(other.headers.get('retry-after')) > 0, 'with Retry-After');

  // One server back: NATS answers, JetStream has no quorum yet.
  await nats.restart(0, { wait: false });
  const noQuorum = await until(
    '/health to say JetStream is not usable',
    async () => {
      const body = (await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) })).json()) as {
        starting?: string;
      };
      return body.starting?.includes('no usable JetStream') ? body.starting : undefined;
    },
    60_000,
  );
  t.match(noQuorum, /no usable JetStream/, 'with one server of three, it waits for JetStream');

  await nats.restart(1, { wait: false });
  // n1 and n2 restarted from their stores must re-form the meta group (n2's log the newer). Awaited here, bounded,
  // so a group that does not re-form (once: the node heard 'JetStream system temporarily unavailable' until its
  // start timed out) fails naming each server's view of the group and its log, not as the node's start timeout.
  await nats.waitForMetaLeader();
  const late = await started;
  t.teardown(() => late.stop());
  t.match(
    await (await ussd(url, `late-${Date.now()}`)).text(),
    /^CON /,
    'once a quorum is back, the node is healthy and answers',
  );
  t.match(late.nodes[0].log(), /waiting for NATS JetStream/, 'it logged why it waited');
});

t.test('a node refuses NATS that acknowledges before fsyncing (exit 78) unless NATS_ALLOW_UNSYNCED_ACKS', async (t) => {
  const nats = await startNatsCluster({ size: 1, binary: ensureNatsServer(), syncAlways: false });
  t.teardown(() => nats.stop());
  const options = {
    natsUrl: nats.urls,
    natsMonitorUrl: nats.monitorUrls,
    count: 1,
    env: { ACTOR_THREADS: '1', NATS_REPLICAS: '1', SHUTDOWN_QUIET_MS: '0' },
  };
  await t.rejects(
    startLocalNodes(options),
    /exited while starting \(78\)[\s\S]*sync_interval 120 s, not always/,
    'refused, naming the setting',
  );

  const accepted = await startLocalNodes({ ...options, env: { ...options.env, NATS_ALLOW_UNSYNCED_ACKS: 'true' } });
  t.teardown(() => accepted.stop());
  t.match(
    accepted.nodes[0].log(),
    /NATS_ALLOW_UNSYNCED_ACKS=true, starting anyway/,
    'accepted on request, with an error in the log',
  );

  const blind = await startLocalNodes({
    ...options,
    natsMonitorUrl: undefined,
    nodeIdPrefix: 'blind-',
    keys: accepted.keys,
  });
  t.teardown(() => blind.stop());
  t.match(
    blind.nodes[0].log(),
    /CANNOT TELL whether NATS fsyncs/,
    'without NATS_MONITOR_URL it starts and warns loudly',
  );
});
