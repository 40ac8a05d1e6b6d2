// node mixed.mjs ROOT : SSE turns (10 streams) alone, then with the bench's USSD load (100 conns) on the same server
import { join } from 'node:path';
const root = process.argv[2];
const { oracleKeys, warmInvocation, startOracle, createSessions } = await import(join(root, 'dist/bench/lib/oracle.js'));
const { measureSse } = await import(join(root, 'dist/bench/lib/sse-load.js'));
const { turnRequest } = await import(join(root, 'dist/bench/sse.js'));
const { ussdSessions } = await import(join(root, 'dist/bench/ussd.js'));
const autocannon = (await import(join(root, 'node_modules/autocannon/autocannon.js'))).default;
const keys = await oracleKeys();
const invocation = await warmInvocation(keys);
const { headers, body } = turnRequest(invocation);
const server = await startOracle(keys);
const streams = 10;
try {
  const sessions = await createSessions(server, invocation, streams);
  const sse = () => measureSse(server, { seconds: 5, concurrency: streams, request: (i) => ({ path: `/messages/${sessions[i]}`, headers, body }) });
  await sse(); // warm
  const alone = await sse();
  const ussd = new Promise((res, rej) => autocannon({ url: `http://127.0.0.1:${server.port}`, connections: 100, duration: 7, requests: ussdSessions('mix').requests }, (e, r) => e ? rej(e) : res(r)));
  await new Promise((r) => setTimeout(r, 1000));
  const mixed = await sse();
  const u = await ussd;
  const f = (m) => `turns/s ${m.throughput.toFixed(0)} p50 ${m.p50Ms.toFixed(1)} p99 ${m.p99Ms.toFixed(1)} ms`;
  console.log(`${root}: SSE alone ${f(alone)} | with USSD ${f(mixed)} | USSD ${Math.round(u.requests.average)}/s p50 ${u.latency.p50} p99 ${u.latency.p99}`);
} finally { await server.stop(); }
