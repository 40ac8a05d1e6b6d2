// The rate limit of WebSocket and Socket.IO handshakes in cluster mode: three real server nodes on a real 3-server
// NATS cluster share one budget per client, so handshakes from one address spread over the nodes are refused with
// 429 at the limit, not three times it.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { NativeClient, SocketIoClient } from './helpers/events.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { startTestServer } from './helpers/server.js';

t.setTimeout(120_000);
const WINDOW_SECONDS = 60;
const MAX = 100;

t.test('handshakes from one address over three nodes share one budget', async (t) => {
  const nats = await startTestNatsCluster(t);
  const env = {
    NATS_URL: nats.urls,
    ACTOR_THREADS: '1',
    PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ORACLE_PRIVATE_KEY: formatKey(await generateKey()),
    RATE_LIMIT_MAX: String(MAX),
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    // Each subtest is its own client (X-Forwarded-For), so they do not share a window's budget.
    TRUST_PROXY_ENABLED: 'true',
  };
  // Together, as a deployment's nodes start: one that opens a bucket another just made waits for its stream's leader.
  const nodes = await Promise.all(
    ['a', 'b', 'c'].map((id) => startTestServer(t, { env: { ...env, NODE_ID: `node-${id}` } })),
  );

  // The windows are fixed minutes: start in a fresh one, so all handshakes fall into the same window.
  const leftMs = WINDOW_SECONDS * 1000 - (Date.now() % (WINDOW_SECONDS * 1000));
  if (leftMs < 10_000) await new Promise((resolve) => setTimeout(resolve, leftMs + 100));

  /** 150 handshakes round-robin over the nodes, five at a time on each (as a load balancer with concurrent clients). */
  const spread = async (handshake: (url: string) => Promise<number>) => {
    const statuses: number[] = [];
    for (let round = 0; round < 10; round++)
      statuses.push(
        ...(await Promise.all(nodes.flatMap((node) => Array.from({ length: 5 }, () => handshake(node.url))))),
      );
    return { refused: statuses.filter((status) => status === 429).length, statuses };
  };

  await t.test('native WebSocket: the upgrade waits for the shared count, as HTTP requests do', async (t) => {
    const headers = { 'x-forwarded-for': '198.51.100.1' };
    const { refused, statuses } = await spread(async (url) => {
      try {
        (await NativeClient.connect(url, {}, { headers })).close();
        return 101;
      } catch (error) {
        return (error as { status: number }).status;
      }
    });
    // Without a session an admitted handshake is refused 400 after the rate limit (which counts it).
    t.equal(statuses.filter((status) => status !== 429 && status !== 400).length, 0, 'only 400 and 429');
    const admitted = 150 - refused;
    t.ok(admitted >= 90 && admitted <= 110, `within 10% of ${MAX} admitted (${admitted}), not 150`);
  });

  await t.test(
    'Socket.IO: the handshake waits for the shared count too (Engine.IO is handed a replay of the request)',
    async (t) => {
      const headers = { 'x-forwarded-for': '198.51.100.2' };
      const { refused, statuses } = await spread(async (url) => {
        const answer = await fetch(`${url}/socket.io/?EIO=4&transport=polling`, { headers });
        const body = await answer.text();
        // 200 only with Engine.IO's open packet.
        return answer.status === 200 && !body.startsWith('0{"sid"') ? -1 : answer.status;
      });
      t.equal(
        statuses.filter((status) => status !== 429 && status !== 200).length,
        0,
        'only 200 (opened by Engine.IO) and 429',
      );
      t.equal(150 - refused, MAX, `exactly ${MAX} admitted`);
    },
  );

  await t.test('Socket.IO: a fast client, back to back over the nodes, gets the limit and no more', async (t) => {
    const headers = { 'x-forwarded-for': '198.51.100.3' };
    const statuses = await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        const answer = await fetch(`${nodes[i % 3].url}/socket.io/?EIO=4&transport=polling`, { headers });
        await answer.arrayBuffer();
        return answer.status;
      }),
    );
    t.equal(statuses.filter((status) => status === 200).length, MAX, `exactly ${MAX} admitted`);
    t.equal(statuses.filter((status) => status === 429).length, 150 - MAX, 'the rest refused 429');
  });

  await t.test(
    'Socket.IO over WebSocket: the upgrade replayed after the count reaches the namespace handshake',
    async (t) => {
      for (const node of nodes) {
        const refusal = await SocketIoClient.connect(
          node.url,
          {},
          {},
          { extraHeaders: { 'x-forwarded-for': '198.51.100.4' } },
        ).then(
          (client) => (client.close(), undefined),
          (error: Error & { data?: { statusCode: number } }) => error,
        );
        // Refused by the channel's own check (no sessionId), which runs only once Engine.IO upgraded the socket.
        t.equal(refusal?.data?.statusCode, 400, `${refusal?.message} on ${node.url}`);
      }
    },
  );
});
