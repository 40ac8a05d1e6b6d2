// The cluster-wide fixed-window rate limit on a real 3-server NATS JetStream cluster: three nodes share one budget.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { ClusterRateLimiter } from '../dist/src/cluster/rate-limit.js';
import { AddressList } from '../dist/src/http/client-address.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

const nats = await startTestNatsCluster(t);
const connections = await Promise.all(
  nats.servers.map((server, i) => connectCluster({ NATS_URL: [server.url], NATS_PREFIX: 'rl' }, `limiter-${i}`)),
);
t.teardown(() => Promise.all(connections.map((c) => c.nc.close())));

const WINDOW_SECONDS = 60;
/** A moment 1 s into a window, so every hit of a test lands in the same window. */
const windowStart = (Math.floor(Date.now() / (WINDOW_SECONDS * 1000)) + 1) * WINDOW_SECONDS * 1000;
const now = windowStart + 1_000;

async function limiters(max: number, allowlist: string[] = []) {
  return Promise.all(
    connections.map((c) =>
      ClusterRateLimiter.open(c, { max, windowSeconds: WINDOW_SECONDS, allowlist: new AddressList(allowlist) }),
    ),
  );
}

t.test(
  '150 requests from one address over three nodes: 100 allowed, the rest told when the window resets',
  async (t) => {
    const nodes = await limiters(100);
    const answers: number[] = [];
    // Each node serves its third of the requests, five at a time, as a node with concurrent clients would.
    await Promise.all(
      nodes.map(async (node) => {
        for (let batch = 0; batch < 10; batch++) {
          answers.push(...(await Promise.all(Array.from({ length: 5 }, () => node.hit('203.0.113.7', now)))));
        }
      }),
    );
    const allowed = answers.filter((a) => a === 0).length;
    t.equal(answers.length, 150);
    t.ok(allowed >= 90 && allowed <= 110, `within 10% of 100 allowed (${allowed})`);
    t.equal(allowed, 100, 'exactly 100 with compare-and-set counters');
    t.ok(
      answers.filter((a) => a > 0).every((a) => a === WINDOW_SECONDS - 1),
      'a refusal says the seconds until the window resets',
    );

    t.equal(await nodes[1].hit('198.51.100.1', now), 0, 'another address has its own budget');
    t.equal(await nodes[2].hit('203.0.113.7', now + WINDOW_SECONDS * 1000), 0, 'the next window starts afresh');
  },
);

t.test('IPv6 counts by /64; allow-listed addresses are exempt', async (t) => {
  const nodes = await limiters(2, ['192.0.2.10']);
  t.equal(await nodes[0].hit('2001:db8:1:2::1', now), 0);
  t.equal(await nodes[1].hit('2001:db8:1:2:ffff::9', now), 0);
  t.ok((await nodes[2].hit('2001:db8:1:2::abcd', now)) > 0, 'the third request from one /64 is refused on any node');
  t.equal(await nodes[2].hit('2001:db8:1:3::1', now), 0, 'the next /64 is another client');
  const gateway = await Promise.all(Array.from({ length: 10 }, (_, i) => nodes[i % 3].hit('192.0.2.10', now)));
  t.same(new Set(gateway), new Set([0]), 'an allow-listed gateway is never limited');
});
