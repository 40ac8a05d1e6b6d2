// Authenticated requests on the oracle, each against a baseline hit by the same client code path:
//  - warm: GET /sessions with one invocation reused (verified once, then from the auth cache), against a bare
//    uWebSockets.js GET answering fixed JSON to the same path and headers;
//  - cold: a fresh, pre-minted invocation per request (each one a full verification), against a bare uWS
//    route verifying the same invocations with ucanto's own verifier. Both run the same invocations, once each,
//    after a warm-up on another fifth as many fresh ones.
import type autocannon from 'autocannon';
import { measure } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';
import {
  createSessions,
  distinctInvocations,
  oracleKeys,
  startOracle,
  ucanHeaders,
  warmInvocation,
} from './lib/oracle.js';
import { startNode, withProcess, type BenchProcess } from './lib/process.js';
import { printRows, row, type Row } from './lib/report.js';

const PATH = '/sessions?limit=20';

/** Each request carries the next invocation of `invocations`; `amount` is their number, so none repeats. */
function coldClient(invocations: string[]): autocannon.Request[] {
  let next = 0;
  return [
    {
      method: 'GET',
      path: PATH,
      setupRequest: (req) => ({
        ...req,
        headers: { ...req.headers, ...ucanHeaders(invocations[next++ % invocations.length]) },
      }),
    },
  ];
}

export async function benchAuth(options: BenchOptions): Promise<Row[]> {
  const { seconds: duration, connections } = options;
  const keys = await oracleKeys();
  const warm = await warmInvocation(keys);
  // A fifth more for an unmeasured warm-up of each side (fresh ones too: the JIT warms, no cache does).
  const minted = await distinctInvocations(keys, options.coldInvocations + Math.ceil(options.coldInvocations / 5));
  const [coldWarmUp, cold] = [minted.slice(options.coldInvocations), minted.slice(0, options.coldInvocations)];
  const warmClient = { duration, connections, path: PATH, headers: ucanHeaders(warm) };
  // autocannon refuses more connections than requests.
  const coldRun = (target: BenchProcess, list: string[]) =>
    measure(target, {
      amount: list.length,
      connections: Math.min(connections, list.length),
      requests: coldClient(list),
    });
  const measureCold = async (target: BenchProcess) => {
    await coldRun(target, coldWarmUp);
    return coldRun(target, cold);
  };

  const bareWarm = row(
    'auth',
    'bare uWS GET, same headers',
    await withProcess(startNode('dist/bench/baselines/bare-uws.js'), (bare) => measure(bare, warmClient)),
  );
  const ucanto = row(
    'auth',
    `ucanto verifier, fresh invocation per request`,
    await withProcess(startNode('dist/bench/baselines/ucanto-verify.js', { ORACLE_DID: keys.oracleDid }), measureCold),
  );
  const [warmRow, coldRow] = await withProcess(startOracle(keys), async (server) => {
    await createSessions(server, warm, 20);
    const warmMeasured = await measure(server, warmClient);
    const coldMeasured = await measureCold(server);
    return [
      row('auth', 'GET /sessions, warm auth', warmMeasured, bareWarm),
      row('auth', 'GET /sessions, cold UCAN (fresh invocation)', coldMeasured, ucanto),
    ];
  });
  const rows = [bareWarm, warmRow, ucanto, coldRow];
  printRows(`Oracle auth: ${connections} connections; warm ${duration} s, cold ${cold.length} fresh invocations`, rows);
  return rows;
}
