// The rate limit through HTTP in cluster mode: three real server nodes on a real 3-server NATS cluster share one
// budget per client, so 150 requests from one address spread over the nodes get about 100 answers, not 150.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createLogger } from '../dist/src/base/log.js';
import { RateLimiter, withLocalFallback } from '../dist/src/http/rate-limit.js';
import { AddressList } from '../dist/src/http/client-address.js';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { startTestServer } from './helpers/server.js';

t.setTimeout(120_000);
const WINDOW_SECONDS = 60;

t.test('100 a minute from one address over three nodes: about 100 allowed, then 429', async (t) => {
  const nats = await startTestNatsCluster(t);
  const env = {
    NATS_URL: nats.urls,
    PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ORACLE_PRIVATE_KEY: formatKey(await generateKey()),
    RATE_LIMIT_MAX: '100',
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  };
  // Together, as a deployment's nodes start: one that opens a bucket another just made waits for its stream's leader.
  const nodes = await Promise.all(
    ['a', 'b', 'c'].map((id) => startTestServer(t, { env: { ...env, NODE_ID: `node-${id}` } })),
  );

  // The windows are fixed minutes: start in a fresh one, so all requests fall into the same window.
  const leftMs = WINDOW_SECONDS * 1000 - (Date.now() % (WINDOW_SECONDS * 1000));
  if (leftMs < 10_000) await new Promise((resolve) => setTimeout(resolve, leftMs + 100));

  const statuses: number[] = [];
  const retryAfter = new Set<string | null>();
  // Round-robin over the nodes, five requests at a time on each, as a load balancer with concurrent clients would.
  for (let round = 0; round < 10; round++) {
    const answers = await Promise.all(nodes.flatMap((node) => Array.from({ length: 5 }, () => fetch(`${node.url}/`))));
    for (const answer of answers) {
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter.add(answer.headers.get('retry-after'));
      await answer.arrayBuffer();
    }
  }
  const allowed = statuses.filter((status) => status === 200).length;
  t.equal(statuses.length, 150);
  t.ok(allowed >= 90 && allowed <= 110, `within 10% of 100 allowed (${allowed}), not 150`);
  t.equal(statuses.filter((status) => status === 429).length, 150 - allowed, 'the rest are 429');
  t.ok(
    [...retryAfter].every((value) => Number(value) >= 1 && Number(value) <= WINDOW_SECONDS),
    `Retry-After until the window resets (${[...retryAfter]})`,
  );
});

t.test('when the shared count fails, this node counts alone for a while (fails open to the local limit)', async (t) => {
  const local = new RateLimiter({ max: 2, windowMs: 60_000, allowlist: new AddressList([]) });
  let clock = 0;
  let natsUp = false;
  let asked = 0;
  const shared = async () => {
    asked++;
    if (!natsUp) throw new Error('NATS down');
    return 7;
  };
  const limit = withLocalFallback(shared, local, createLogger('silent'), () => clock);
  t.same([await limit('192.0.2.1'), await limit('192.0.2.1')], [0, 0]);
  t.ok((await limit('192.0.2.1')) > 0, 'the third request of the window is refused by the local count');
  t.equal(asked, 1, 'after a failure the shared count is not asked again at once');
  natsUp = true;
  clock = 10_000;
  t.equal(await limit('192.0.2.1'), 7, 'asked again after the pause, its answer is used as it is');
  t.equal(asked, 2);
});

t.test(
  'a shared count that does not answer: the request counts locally after the bound, one probe at a time',
  async (t) => {
    const local = new RateLimiter({ max: 100, windowMs: 60_000, allowlist: new AddressList([]) });
    let clock = 0;
    let asked = 0;
    let answer: ((wait: number) => void) | undefined;
    // NATS gone or electing: the shared count is asked and answers only when the test says so.
    const shared = () => {
      asked++;
      return new Promise<number>((resolve) => (answer = resolve));
    };
    const limit = withLocalFallback(shared, local, createLogger('silent'), () => clock, 50);
    const started = performance.now();
    t.equal(await limit('192.0.2.1'), 0, 'allowed by the local count');
    const waited = performance.now() - started;
    t.ok(waited >= 45 && waited < 1_000, `after the bound, not the JetStream timeout (${Math.round(waited)} ms)`);
    t.equal(await limit('192.0.2.1'), 0);
    t.equal(asked, 1, 'then this node counts alone for a while');

    clock = 10_000;
    const probe = limit('192.0.2.1');
    t.same(
      await Promise.all([limit('192.0.2.1'), limit('192.0.2.1')]),
      [0, 0],
      'while one request asks the shared count again, the others count locally at once',
    );
    t.equal(asked, 2, 'one probe');
    answer!(7);
    t.equal(await probe, 7, "the probe's answer is used as it is");
    const next = limit('192.0.2.1');
    t.equal(asked, 3, 'the next request asks the shared count again');
    answer!(0);
    t.equal(await next, 0);
  },
);
