// USSD durable steps against the ceiling, driven by one client code path: each autocannon connection dials a
// fresh session and walks 5 inputs, every request with its own JSON body built in setupRequest and every answer
// checked in onResponse. The same requests go to a bare uWebSockets.js route answering a fixed CON (the
// ceiling) and to the real server (validated, actor-routed, committed to LMDB and synced before the answer).
import type autocannon from 'autocannon';
import { INVALID_INPUT, SERVICE_UNAVAILABLE, SESSION_EXPIRED } from '../src/ussd/answers.js';
import { gatewaySessionId } from '../src/tools/load/session-ids.js';
import { measure } from './lib/load.js';
import type { BenchOptions, UssdIds } from './lib/options.js';
import { startNode, startServerProcess, type LoadTarget } from './lib/process.js';
import { overRuns, printRows, row, type Measured, type Row } from './lib/report.js';

/** One session: dial, then 5 inputs through the information menu and back home. */
export const STEPS = ['', '1', '1*1', '1*1*0', '1*1*0*2', '1*1*0*2*00'];
const FAILURES = new Set([INVALID_INPUT, SERVICE_UNAVAILABLE, SESSION_EXPIRED]);

export { gatewaySessionId };

/**
 * A new session ID per call. `gateway`: gatewaySessionId, so the sessions in progress share nothing in their IDs;
 * `sequential`: `<prefix>-<pid>-<n>`, the bench's IDs before session 8, whose sessions in progress sort next to
 * each other.
 */
export function ussdSessionIds(prefix: string, ids: UssdIds): (n: number) => string {
  return ids === 'gateway' ? gatewaySessionId : (n) => `${prefix}-${process.pid}-${n}`;
}

/** Requests of whole sessions, each with a session id of its own; counts sessions and wrong answers. */
export function ussdSessions(
  prefix: string,
  ids: UssdIds = 'gateway',
): { requests: autocannon.Request[]; sessions(): number; wrong(): number } {
  const sessionId = ussdSessionIds(prefix, ids);
  let sessions = 0;
  let wrong = 0;
  const requests = STEPS.map((text, step) => ({
    method: 'POST' as const,
    path: '/api/ussd',
    headers: { 'content-type': 'application/json' },
    setupRequest(req: autocannon.Request, context: { sessionId?: string }) {
      if (step === 0) context.sessionId = sessionId(++sessions);
      req.body = JSON.stringify({
        sessionId: context.sessionId,
        serviceCode: '*123#',
        phoneNumber: '+254700000001',
        text,
      });
      return req;
    },
    onResponse(_status: number, body: string) {
      if (!/^(CON|END) /.test(body) || FAILURES.has(body)) wrong++;
    },
  }));
  return { requests, sessions: () => sessions, wrong: () => wrong };
}

/** Whole USSD sessions (`ussdSessions`) over `connections` for `seconds`; wrong answers count as errors. */
export async function measureUssd(
  target: LoadTarget,
  options: Pick<BenchOptions, 'seconds' | 'connections' | 'ussdIds'>,
  prefix: string,
) {
  const client = ussdSessions(prefix, options.ussdIds);
  const measured = await measure(target, {
    duration: options.seconds,
    connections: options.connections,
    requests: client.requests,
  });
  // Wrong answers of the warm-up count too: an error is an error.
  return { ...measured, errors: measured.errors + client.wrong() };
}

export async function benchUssd(options: BenchOptions): Promise<Row[]> {
  // Both servers stay up for all the pairs: with several, each pair alternates which of the two runs first, so
  // that the machine's drift between runs (a bare route's CPU per request moves by half between runs minutes
  // apart on a shared VM) falls on both sides alike.
  const bare = await startNode('dist/bench/baselines/bare-uws.js');
  const server = await startServerProcess().catch(async (error: unknown) => {
    await bare.stop();
    throw error;
  });
  const runBare = () => measureUssd(bare, options, 'bare');
  const runUssd = () => measureUssd(server, options, 'ussd');
  const runs: { bare: Measured; ussd: Measured }[] = [];
  try {
    for (let pair = 0; pair < options.pairs; pair++) {
      if (pair % 2) runs.push({ ussd: await runUssd(), bare: await runBare() });
      else runs.push({ bare: await runBare(), ussd: await runUssd() });
    }
  } finally {
    await Promise.all([bare.stop(), server.stop()]);
  }
  const baseline = row('ussd', 'bare uWS, fixed CON', overRuns(runs.map((r) => r.bare)));
  const ussd = row('ussd', 'USSD durable step', overRuns(runs.map((r) => r.ussd)), baseline);
  const rows = [baseline, ussd];
  const over = options.pairs > 1 ? `, each row over ${options.pairs} runs alternating with the other's` : '';
  printRows(
    `USSD: ${options.connections} connections, ${options.seconds} s each, per-request bodies on both, ${options.ussdIds} session IDs${over}`,
    rows,
  );
  if (options.pairs > 1) {
    const each = (figure: (r: Measured) => number) =>
      runs.map((r) => (figure(r.ussd) / figure(r.bare)).toFixed(2)).join(' ');
    console.log(
      `USSD vs bare in each pair: CPU per step ${each((r) => r.cpuMsPerOp)}; steps per second ${each((r) => r.throughput)}`,
    );
  }
  return rows;
}
