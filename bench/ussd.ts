// USSD durable steps against the ceiling, driven by one client code path: each autocannon connection dials a
// fresh session and walks 5 inputs, every request with its own JSON body built in setupRequest and every answer
// checked in onResponse. The same requests go to a bare uWebSockets.js route answering a fixed CON (the
// ceiling) and to the real server (validated, actor-routed, committed to LMDB and synced before the answer).
import type autocannon from 'autocannon';
import { INVALID_INPUT, SERVICE_UNAVAILABLE, SESSION_EXPIRED } from '../src/ussd/answers.js';
import { measure } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';
import { startNode, startServerProcess, type LoadTarget } from './lib/process.js';
import { printRows, row, type Row } from './lib/report.js';

/** One session: dial, then 5 inputs through the information menu and back home. */
export const STEPS = ['', '1', '1*1', '1*1*0', '1*1*0*2', '1*1*0*2*00'];
const FAILURES = new Set([INVALID_INPUT, SERVICE_UNAVAILABLE, SESSION_EXPIRED]);

/** Requests of whole sessions, each with a session id of its own; counts sessions and wrong answers. */
export function ussdSessions(prefix: string): { requests: autocannon.Request[]; sessions(): number; wrong(): number } {
  let sessions = 0;
  let wrong = 0;
  const requests = STEPS.map((text, step) => ({
    method: 'POST' as const,
    path: '/api/ussd',
    headers: { 'content-type': 'application/json' },
    setupRequest(req: autocannon.Request, context: { sessionId?: string }) {
      if (step === 0) context.sessionId = `${prefix}-${process.pid}-${++sessions}`;
      req.body = JSON.stringify({ sessionId: context.sessionId, serviceCode: '*123#', phoneNumber: '+254700000001', text });
      return req;
    },
    onResponse(_status: number, body: string) {
      if (!/^(CON|END) /.test(body) || FAILURES.has(body)) wrong++;
    },
  }));
  return { requests, sessions: () => sessions, wrong: () => wrong };
}

/** Whole USSD sessions (`ussdSessions`) over `connections` for `seconds`; wrong answers count as errors. */
export async function measureUssd(target: LoadTarget, options: Pick<BenchOptions, 'seconds' | 'connections'>, prefix: string) {
  const client = ussdSessions(prefix);
  const measured = await measure(target, { duration: options.seconds, connections: options.connections, requests: client.requests });
  // Wrong answers of the warm-up count too: an error is an error.
  return { ...measured, errors: measured.errors + client.wrong() };
}

export async function benchUssd(options: BenchOptions): Promise<Row[]> {
  const bare = await startNode('dist/bench/baselines/bare-uws.js');
  let baseline: Row;
  try {
    baseline = row('ussd', 'bare uWS, fixed CON', await measureUssd(bare, options, 'bare'));
  } finally {
    await bare.stop();
  }
  const server = await startServerProcess();
  let ussd: Row;
  try {
    ussd = row('ussd', 'USSD durable step', await measureUssd(server, options, 'ussd'), baseline);
  } finally {
    await server.stop();
  }
  const rows = [baseline, ussd];
  printRows(`USSD: ${options.connections} connections, ${options.seconds} s each, per-request bodies on both`, rows);
  return rows;
}
