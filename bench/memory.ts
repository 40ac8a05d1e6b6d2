// Memory, two rows:
//  - idle WebSockets: --ws-sockets sockets opened on the oracle's /ws (authenticated, 100 per session) and,
//    by the same client processes, on a bare uWebSockets.js WebSocket server; RSS after connecting minus
//    before, per socket (the server's heap is not forced through a GC, so this includes garbage of the
//    handshakes not yet collected);
//  - USSD sessions after they expire: --ussd-rounds rounds of --ussd-sessions whole sessions (the client of
//    the ussd benchmark) on a server whose sessions live 2 s and idle actors 1 s; after each round the run
//    waits until the sessions expired, their actors were dropped and the sweep ran, and reads RSS. Flat means
//    later rounds leave RSS where the first one left it. LMDB's pages are memory-mapped, so touched database
//    pages count in RSS too.
import { setTimeout as pause } from 'node:timers/promises';
import { ClientPool } from './lib/client-pool.js';
import { measure } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';
import { createSessions, oracleKeys, startOracle, warmInvocation } from './lib/oracle.js';
import { startNode, startServerProcess, withProcess, type BenchProcess } from './lib/process.js';
import { printRows, row, type Measured, type Row } from './lib/report.js';
import { STEPS, ussdSessions } from './ussd.js';

const SOCKETS_PER_SESSION = 100;
const CLIENT_PROCESSES = 2;
const USSD_TTL_SECONDS = 2;
const ACTOR_IDLE_SECONDS = 1;

async function idleSockets(target: BenchProcess, sessions: string[], invocation?: string): Promise<Measured> {
  const assignments = sessions.flatMap((id) => Array.from({ length: SOCKETS_PER_SESSION }, () => id));
  const pool = ClientPool.start(CLIENT_PROCESSES);
  try {
    await pause(300);
    const rssBefore = target.rssBytes();
    const cpuBefore = target.cpuSeconds();
    const started = performance.now();
    const connected = await pool.connect({ baseUrl: `http://127.0.0.1:${target.port}`, transport: 'ws', invocation, concurrency: 64 }, assignments);
    const seconds = (performance.now() - started) / 1000;
    const cpu = target.cpuSeconds() - cpuBefore;
    // Let the handshakes' work settle before reading memory.
    await pause(1000);
    const rssBytes = target.rssBytes();
    const open = Math.max(1, connected.open);
    if (connected.failed) console.log(`${connected.failed} sockets failed to connect (${connected.error})`);
    return {
      unit: 'socket', count: connected.open, throughput: connected.open / seconds, p50Ms: NaN, p99Ms: NaN,
      cpuMsPerOp: (cpu * 1000) / open, rssBytes, errors: connected.failed,
      extra: { rssPerOpBytes: Math.round((rssBytes - rssBefore) / open) },
    };
  } finally {
    await pool.close();
  }
}

async function ussdExpiry(options: BenchOptions): Promise<Measured> {
  const server = await startServerProcess({ USSD_SESSION_TTL_SECONDS: String(USSD_TTL_SECONDS), ACTOR_IDLE_SECONDS: String(ACTOR_IDLE_SECONDS) });
  try {
    const rssStart = server.rssBytes();
    const afterRound: number[] = [];
    let sessions = 0;
    let errors = 0;
    let seconds = 0;
    const cpuBefore = server.cpuSeconds();
    for (let round = 0; round < options.ussdRounds; round++) {
      const client = ussdSessions(`expiry${round}`);
      const measured = await measure(server, { amount: options.ussdSessions * STEPS.length, connections: options.connections, requests: client.requests });
      sessions += client.sessions();
      errors += measured.errors + client.wrong();
      seconds += measured.count / measured.throughput;
      // Expiry, then the idle-actor sweep and the expiry sweep (each at most a second apart), with a margin.
      await pause((USSD_TTL_SECONDS + ACTOR_IDLE_SECONDS + 2) * 1000);
      afterRound.push(server.rssBytes());
    }
    const first = afterRound[0];
    const last = afterRound[afterRound.length - 1];
    const laterSessions = sessions - sessions / options.ussdRounds;
    return {
      unit: 'session', count: sessions, throughput: sessions / seconds, p50Ms: NaN, p99Ms: NaN,
      cpuMsPerOp: ((server.cpuSeconds() - cpuBefore) * 1000) / sessions, rssBytes: last, errors,
      extra: {
        rssStartMiB: rssStart / 2 ** 20,
        rssAfterFirstRoundMiB: first / 2 ** 20,
        rssAfterLastRoundMiB: last / 2 ** 20,
        // Growth after the first round, per later session: 0 when flat.
        growthPerLaterSessionBytes: laterSessions ? Math.round((last - first) / laterSessions) : NaN,
      },
    };
  } finally {
    await server.stop();
  }
}

export async function benchMemory(options: BenchOptions): Promise<Row[]> {
  const sessionCount = Math.max(1, Math.round(options.wsSockets / SOCKETS_PER_SESSION));
  const bareSessions = Array.from({ length: sessionCount }, (_, i) => `bare-${i}`);
  const bare = row('memory', 'bare uWS WebSocket, idle', await withProcess(startNode('dist/bench/baselines/bare-uws-ws.js'), (target) => idleSockets(target, bareSessions)));
  const keys = await oracleKeys();
  const invocation = await warmInvocation(keys);
  const oracle = row('memory', 'oracle /ws, idle', await withProcess(startOracle(keys), async (server) => {
    const sessions = await createSessions(server, invocation, sessionCount);
    return idleSockets(server, sessions, invocation);
  }), bare);
  const expiry = row('memory', `USSD sessions after expiry (${options.ussdRounds} rounds)`, await ussdExpiry(options));
  const rows = [bare, oracle, expiry];
  printRows(`Memory: ${sessionCount * SOCKETS_PER_SESSION} idle sockets (${SOCKETS_PER_SESSION} per session); ${options.ussdRounds} rounds of ${options.ussdSessions} USSD sessions`, rows);
  return rows;
}
