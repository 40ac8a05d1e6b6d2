// The oracle under load, each run next to a bare uWebSockets.js baseline in the same process run:
//  1. authenticated request throughput (GET /sessions) with a warm auth cache (one invocation reused)
//     and a cold one (a fresh, pre-minted invocation per request: every request verifies Ed25519
//     signatures in the CPU pool), against a bare uWS route that answers fixed JSON to the same headers;
//  2. many concurrent SSE streams (`stream: true` messages with the built-in agent, one session per
//     caller) against a bare uWS route streaming the same number of frames of the same size.
// BENCH_SECONDS (default 10), BENCH_CONNECTIONS (32), BENCH_COLD_INVOCATIONS (3000), BENCH_STREAMS (200).
import { formatKey, generateKey, mintInvocation } from '../src/tools/mint-ucan.js';
import { benchSeconds, measure, printTable, type LoadResult } from './lib/load.js';
import { startNode, startServerProcess } from './lib/process.js';
import { measureSse, printSseTable, streamOnce, type SseLoadResult } from './lib/sse-load.js';
import { Agent } from 'node:http';

const auth = (invocation: string) => ({ authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' });

/** Distinct invocations: the same fields in the same second would sign to the same bytes. */
async function mintDistinct(count: number, issuer: Awaited<ReturnType<typeof generateKey>>, audience: string): Promise<string[]> {
  const now = Math.floor(Date.now() / 1000);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(await mintInvocation({ issuer, audience, notBefore: now - 60 - (i % 1000), expiration: now + 600 + Math.floor(i / 1000) }));
  }
  return out;
}

export async function benchOracle(): Promise<{ auth: LoadResult[]; streams: SseLoadResult[] }> {
  const duration = benchSeconds();
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const coldCount = Number(process.env.BENCH_COLD_INVOCATIONS ?? 3000);
  const concurrency = Number(process.env.BENCH_STREAMS ?? 200);

  const oracleKey = await generateKey();
  const oracleDid = oracleKey.did();
  const user = await generateKey();
  const warm = await mintInvocation({ issuer: user, audience: oracleDid, ttlSeconds: 900 });
  const mintStarted = performance.now();
  const cold = await mintDistinct(coldCount, user, oracleDid);
  console.log(`minted ${coldCount} invocations in ${((performance.now() - mintStarted) / 1000).toFixed(1)} s`);

  // 1. Authenticated throughput.
  const bare = await startNode('dist/bench/baselines/bare-uws.js');
  const baseline = await measure('bare uWS GET, same headers', bare, { duration, connections, path: '/sessions', headers: auth(warm) });
  await bare.stop();

  const server = await startServerProcess({ ORACLE_PRIVATE_KEY: formatKey(oracleKey), LOG_LEVEL: 'info' });
  const base = `http://127.0.0.1:${server.port}`;
  const sessions: string[] = [];
  for (let i = 0; i < concurrency; i++) {
    const res = await fetch(`${base}/sessions`, { method: 'POST', headers: auth(warm) });
    if (res.status !== 201) throw new Error(`POST /sessions answered ${res.status}`);
    sessions.push(((await res.json()) as { sessionId: string }).sessionId);
  }
  const warmRow = await measure('GET /sessions, warm auth cache', server, { duration, connections, path: '/sessions?limit=20', headers: auth(warm) });
  let next = 0;
  const coldRow = await measure(`GET /sessions, cold cache (${coldCount} fresh invocations)`, server, {
    amount: coldCount,
    connections,
    requests: [{ method: 'GET', path: '/sessions?limit=20', setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...auth(cold[next++ % cold.length]) } }) }],
  });
  printTable(`Oracle: authenticated GET /sessions (${connections} connections, ${duration} s; cold = ${coldCount} requests)`, baseline, [warmRow, coldRow]);

  // 2. Concurrent SSE streams. One warm-up stream tells the baseline how many frames and bytes to send.
  const body = JSON.stringify({ message: 'hello there, how are you today?', stream: true });
  const headers = { ...auth(warm), 'content-type': 'application/json' };
  const probe = new Agent({ keepAlive: false });
  const sample = await streamOnce(server.port, probe, `/messages/${sessions[0]}`, headers, body);
  const sampleText = await (await fetch(`${base}/messages/${sessions[0]}`, { method: 'POST', headers, body })).text();
  const frames = sampleText.split('\n\n').length - 1;
  const bareSse = await startNode('dist/bench/baselines/bare-uws-sse.js', { FRAMES: String(frames), FRAME_BYTES: String(Math.round(sample.bytes / frames)) });
  const sseBaseline = await measureSse(`bare uWS SSE (${frames} frames)`, bareSse, {
    seconds: duration,
    concurrency,
    request: () => ({ path: '/messages/x', headers, body }),
  });
  await bareSse.stop();
  const oracleStreams = await measureSse(`oracle SSE, built-in agent (${frames} frames)`, server, {
    seconds: duration,
    concurrency,
    request: (index) => ({ path: `/messages/${sessions[index]}`, headers, body }),
  });
  const rss = server.rssBytes();
  await server.stop();
  printSseTable(`Oracle: ${concurrency} concurrent SSE streams, ${duration} s each`, sseBaseline, [oracleStreams]);
  console.log(`server RSS after the run: ${(rss / 2 ** 20).toFixed(0)} MiB`);
  return { auth: [baseline, warmRow, coldRow], streams: [sseBaseline, oracleStreams] };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchOracle();
