// The server in cluster mode: config checked (exit 78 from the real process), NATS JetStream connected at
// start-up or no start, the partition leases joined, /health reporting NATS, JetStream, the node id and partitions.
import t from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { pino } from 'pino';
import { loadConfig } from '../dist/src/app/config.js';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { startTestServer } from './helpers/server.js';

t.setTimeout(120_000);
const keys = {
  PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  ORACLE_PRIVATE_KEY: formatKey(await generateKey()),
};

/** Runs the real server process with `env`; resolves its exit code and stderr. */
function runServer(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/src/app/main.js'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: t.testdir(), ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

t.test('cluster mode without the keys every node must share stops the real server with exit 78', async (t) => {
  const missing = await runServer({ NATS_URL: 'nats://127.0.0.1:4222' });
  t.equal(missing.code, 78);
  t.match(missing.stderr, /PIN_ENCRYPTION_KEY="": is required when NATS_URL is set/);
  t.match(missing.stderr, /ORACLE_PRIVATE_KEY="": is required when NATS_URL is set/);
});

t.test('cluster settings are validated like every variable', async (t) => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  };
  const bad = problems({
    ...keys,
    NATS_URL: 'http://127.0.0.1:4222',
    NATS_REPLICAS: '9',
    NATS_PREFIX: 'a.b',
    NODE_ID: 'a b',
  });
  t.match(bad, /NATS_URL="http:\/\/127.0.0.1:4222": must be a comma-separated list of nats:\/\/host:port/);
  t.match(bad, /NATS_REPLICAS="9": must be a whole number from 1 to 5/);
  t.match(bad, /NATS_PREFIX="a.b": must be 1-32 letters/);
  t.match(bad, /NODE_ID="a b": must be 1-128 letters/);
  t.match(
    problems({ ...keys, NATS_URL: 'nats://h1:4222', NATS_CREDS: '/nonexistent/user.creds' }),
    /NATS_CREDS=.*must name an existing credentials file/,
  );
  t.match(
    problems({ ...keys, NATS_URL: 'nats://h1:4222', NATS_TOKEN: 'x', NATS_CREDS: '/etc/hostname' }),
    /set one of them, not both/,
  );
  t.equal(problems({ NATS_REPLICAS: '9' }).includes('NATS_REPLICAS'), true, 'checked even without NATS_URL');

  const config = loadConfig({ ...keys, NATS_URL: ' nats://h1:4222, h2:4222 ,tls://h3' });
  t.same(config.NATS_URL, ['nats://h1:4222', 'h2:4222', 'tls://h3']);
  t.equal(config.NATS_PREFIX, 'sar');
  t.equal(config.NATS_REPLICAS, undefined, 'decided from the cluster at connect time');
  t.same(loadConfig({}).NATS_URL, [], 'no NATS_URL: single node, no keys required');
});

t.test('a node that cannot reach NATS within NATS_START_TIMEOUT_SECONDS does not start', async (t) => {
  const closedPort = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  // A node waits for NATS as long as it takes unless told otherwise (test/cluster-degraded-start.test.ts).
  await t.rejects(
    startTestServer(t, {
      env: { ...keys, NATS_URL: `nats://127.0.0.1:${closedPort}`, NATS_START_TIMEOUT_SECONDS: '1' },
    }),
    /cannot connect to NATS at nats:\/\/127.0.0.1:\d+/,
  );
});

t.test(
  '/health: single node unchanged; cluster node reports NATS, JetStream, its id and partitions, and 503 without NATS',
  async (t) => {
    const started = performance.now();
    const lap = (what: string) => t.comment(`${what}: ${(performance.now() - started).toFixed(0)} ms`);
    const single = await startTestServer(t);
    lap('single node started');
    const plain = (await (await fetch(`${single.url}/health`)).json()) as Record<string, unknown>;
    t.same(
      Object.keys(plain).sort(),
      ['database', 'environment', 'httpEngine', 'pid', 'status', 'storage', 'timestamp', 'uptime', 'ussd'],
      'no cluster field on a single node',
    );
    t.equal(
      plain.httpEngine && (plain.httpEngine as { name: string }).name,
      single.http.engine.name,
      'the engine serving',
    );

    const nats = await startTestNatsCluster(t);
    lap('NATS cluster started');
    const logged: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(line) });
    const node = await startTestServer(t, { env: { ...keys, NATS_URL: nats.urls, NODE_ID: 'node-a' }, log });
    lap('cluster node started');
    t.ok(
      logged.some((line) => /"nodeId":"node-a".*joined the partition leases/.test(line)),
      'the start-up log says it joined the leases',
    );
    const health = async () => {
      const response = await fetch(`${node.url}/health`);
      return {
        status: response.status,
        body: (await response.json()) as { status: string; cluster: Record<string, unknown> },
      };
    };
    // The key checks live beside the records, in JetStream: a node with another PIN key is refused (exit 78).
    await t.rejects(
      startTestServer(t, {
        env: { ...keys, PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'), NATS_URL: nats.urls, NODE_ID: 'node-b' },
      }),
      { exitCode: 78, variable: 'PIN_ENCRYPTION_KEY', message: /the PINs in the cluster's JetStream were encrypted/ },
    );
    lap('a node with another PIN key refused');
    const first = await health();
    t.equal(first.status, 200);
    t.match(first.body, {
      status: 'ok',
      database: 'connected',
      cluster: {
        nodeId: 'node-a',
        nats: 'connected',
        jetstream: 'available',
        replicas: 3,
        state: 'cluster',
        partitions: { owned: 128, total: 128 },
        liveNodes: ['node-a'],
      },
    });
    t.match(first.body.cluster.link, /^\d+\.\d+\.\d+\.\d+:\d+$/, 'names the host:port of its node link');
    const server = first.body.cluster.server as string;
    t.ok(
      nats.servers.some((s) => s.name === server),
      `names its NATS server (${server})`,
    );

    // Its NATS server dies: the client moves to another one and the node stays healthy.
    await nats.kill(nats.servers.findIndex((s) => s.name === server));
    let moved = await health();
    for (const deadline = Date.now() + 10_000; moved.body.cluster.server === server || moved.status !== 200; ) {
      if (Date.now() > deadline) break;
      moved = await health();
    }
    lap('moved to another NATS server');
    t.equal(moved.status, 200, `healthy again on ${moved.body.cluster.server}`);
    t.not(moved.body.cluster.server, server);

    // Every NATS server dies: the node says so.
    await Promise.all(nats.servers.map((_, i) => nats.kill(i)));
    let down = await health();
    for (const deadline = Date.now() + 10_000; down.status === 200 && Date.now() < deadline; ) down = await health();
    lap('all NATS servers down');
    t.equal(down.status, 503);
    t.match(down.body, {
      status: 'error',
      database: 'disconnected',
      cluster: { nodeId: 'node-a', nats: 'reconnecting', jetstream: 'unavailable' },
    });
  },
);
