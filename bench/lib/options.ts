// The flags of `npm run bench -- ...` (each with an environment fallback, so `BENCH_JSON=path npm run bench` works).
import { parseArgs } from 'node:util';

export const BENCHES = ['ussd', 'auth', 'sse', 'gateway', 'memory', 'fanout', 'metrics', 'tracing'] as const;
/** `gateway`: random, as an aggregator names sessions (`ATUid_` and 32 hex digits); `sequential`: a counter. */
export const USSD_IDS = ['gateway', 'sequential'] as const;
export type UssdIds = (typeof USSD_IDS)[number];
export type BenchName = (typeof BENCHES)[number];
/** `fanout` (thousands of sockets against Socket.IO), `metrics` and `tracing` (rounds of runs) take a minute or more: only when asked for. */
const DEFAULT_BENCHES: BenchName[] = ['ussd', 'auth', 'sse', 'gateway', 'memory'];

/** The front door engines the server under test runs on (HTTP_ENGINE), each benchmark once per engine. */
export const ENGINES = ['uws', 'node'] as const;
export type EngineName = (typeof ENGINES)[number];

export interface BenchOptions {
  only: BenchName[];
  /** Default: both when a native uWS build loads here, else node. */
  engines: EngineName[];
  /** Length of each load run. */
  seconds: number;
  /** autocannon connections (and concurrent gRPC callers). */
  connections: number;
  /** Fresh invocations minted for the cold UCAN rows (each verified once). */
  coldInvocations: number;
  /** Concurrent SSE streams. */
  streams: number;
  /** Idle WebSockets held for the memory row. */
  wsSockets: number;
  /** USSD sessions per round of the expiry memory row. */
  ussdSessions: number;
  /** Rounds of `ussdSessions` sessions, each left to expire before the next. */
  ussdRounds: number;
  /** Runs of the `ussd` row and of its baseline, alternating which goes first; the rows are over all of them. */
  pairs: number;
  /** The shape of the USSD rows' session IDs (ussdSessionIds in bench/ussd.ts). */
  ussdIds: UssdIds;
  json?: string;
}

export const USAGE = `usage: npm run bench -- [flags]
  --only ${BENCHES.join(',')}   benchmarks to run (BENCH_ONLY; default all but fanout, metrics, tracing)
  --engines uws,node     front door engines of the server under test (BENCH_ENGINES; default both when a native
                         uWS build loads here, else node): each benchmark runs on each, its rows side by side;
                         rows of the node engine (baselines included, measured again in its pass) end in
                         "(engine node)"
  --seconds N            length of each load run (BENCH_SECONDS, default 3)
  --connections N        autocannon connections / concurrent gRPC calls (BENCH_CONNECTIONS, default 100)
  --cold-invocations N   fresh UCAN invocations for the cold-verification rows (default 1000)
  --streams N            concurrent SSE streams (default 50)
  --ws-sockets N         idle WebSockets for the memory row (default 2000)
  --ussd-sessions N      USSD sessions per round of the expiry memory row (default 3000)
  --ussd-rounds N        rounds of those sessions, each left to expire (default 2)
                         issue 13's scale: --only memory --ws-sockets 50000 --ussd-sessions 20000 --ussd-rounds 5
                         (sockets beyond the server's hard limit on open files are not attempted)
  --pairs N              runs of the ussd row and of its baseline, both servers up throughout, alternating which
                         goes first; each row is over all its runs (BENCH_PAIRS, default 1)
  --ussd-ids gateway|sequential
                         session IDs of the USSD rows: random as a gateway's (default), or from a counter, as
                         before session 8 (BENCH_USSD_IDS)
  --json PATH            write every row as JSON (BENCH_JSON)
BENCH_NODE_ARGS passes node flags to the server under test, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".`;

/** A positive number flag (whole unless it is `seconds`), or `fallback` when not given. */
export function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!(n > 0) || (name !== 'seconds' && !Number.isInteger(n)))
    throw new Error(
      `--${name} must be a positive ${name === 'seconds' ? 'number' : 'whole number'}, not ${JSON.stringify(value)}`,
    );
  return n;
}

export function parseBenchOptions(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  defaultEngines: EngineName[] = ['uws', 'node'],
): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string', default: env.BENCH_ONLY },
      engines: { type: 'string', default: env.BENCH_ENGINES },
      seconds: { type: 'string', default: env.BENCH_SECONDS },
      connections: { type: 'string', default: env.BENCH_CONNECTIONS },
      'cold-invocations': { type: 'string' },
      streams: { type: 'string' },
      'ws-sockets': { type: 'string' },
      'ussd-sessions': { type: 'string' },
      'ussd-rounds': { type: 'string' },
      pairs: { type: 'string', default: env.BENCH_PAIRS },
      'ussd-ids': { type: 'string', default: env.BENCH_USSD_IDS },
      json: { type: 'string', default: env.BENCH_JSON },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const only = values.only
    ? values.only
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : DEFAULT_BENCHES;
  const unknown = only.filter((name) => !(BENCHES as readonly string[]).includes(name));
  if (unknown.length) throw new Error(`--only: unknown benchmark ${unknown.join(', ')} (known: ${BENCHES.join(', ')})`);
  const engines = values.engines
    ? values.engines
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : defaultEngines;
  const badEngine = engines.filter((name) => !(ENGINES as readonly string[]).includes(name));
  if (badEngine.length || engines.length === 0)
    throw new Error(`--engines: ${badEngine.join(', ') || 'none'} (known: ${ENGINES.join(', ')})`);
  const ussdIds = values['ussd-ids'] || 'gateway';
  if (!(USSD_IDS as readonly string[]).includes(ussdIds))
    throw new Error(`--ussd-ids must be ${USSD_IDS.join(' or ')}, not ${JSON.stringify(ussdIds)}`);
  return {
    only: only as BenchName[],
    engines: engines as EngineName[],
    seconds: positive('seconds', values.seconds, 3),
    connections: positive('connections', values.connections, 100),
    coldInvocations: positive('cold-invocations', values['cold-invocations'], 1000),
    streams: positive('streams', values.streams, 50),
    wsSockets: positive('ws-sockets', values['ws-sockets'], 2000),
    ussdSessions: positive('ussd-sessions', values['ussd-sessions'], 3000),
    ussdRounds: positive('ussd-rounds', values['ussd-rounds'], 2),
    pairs: positive('pairs', values.pairs, 1),
    ussdIds: ussdIds as UssdIds,
    json: values.json || undefined,
  };
}
