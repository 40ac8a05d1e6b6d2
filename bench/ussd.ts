// USSD sessions under load: each autocannon connection dials a fresh session and walks 6 inputs,
// next to a bare uWebSockets.js route answering a fixed CON text (the ceiling), in the same run.
import type autocannon from 'autocannon';
import { benchSeconds, measure, printTable, type LoadResult } from './lib/load.js';
import { startNode, startServerProcess } from './lib/process.js';

/** One session: dial, then 5 inputs through the information menu and back home. */
const STEPS = ['', '1', '1*1', '1*1*0', '1*1*0*2', '1*1*0*2*00'];
let sessions = 0;

export function ussdRequests(): autocannon.Request[] {
  return STEPS.map((text, step) => ({
    method: 'POST' as const,
    path: '/api/ussd',
    headers: { 'content-type': 'application/json' },
    setupRequest(req: autocannon.Request, context: { sessionId?: string }) {
      if (step === 0) context.sessionId = `bench-${process.pid}-${++sessions}`;
      req.body = JSON.stringify({ sessionId: context.sessionId, serviceCode: '*123#', phoneNumber: '+254700000001', text });
      return req;
    },
  }));
}

export async function benchUssd(): Promise<LoadResult[]> {
  const duration = benchSeconds();
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

  const bare = await startNode('dist/bench/baselines/bare-uws.js');
  const baseline = await measure('bare uWS fixed CON', bare, {
    duration,
    connections,
    method: 'POST',
    path: '/api/ussd',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId: 'x', serviceCode: '*123#', phoneNumber: '+254700000001', text: '' }),
  });
  await bare.stop();

  const server = await startServerProcess();
  sessions = 0;
  const ussd = await measure('USSD sessions (6 durable steps each)', server, { duration, connections, requests: ussdRequests() });
  const rss = server.rssBytes();
  await server.stop();

  printTable(`USSD: ${connections} connections, ${duration} s each, ${sessions} sessions`, baseline, [ussd]);
  console.log(`server RSS after the run: ${(rss / 2 ** 20).toFixed(0)} MiB`);
  return [baseline, ussd];
}

if (import.meta.url === `file://${process.argv[1]}`) await benchUssd();
