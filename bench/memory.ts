// Memory, two rows (the goals of issue 13: <= 3 KB of server RSS per idle WebSocket at 50k sockets; RSS flat
// over 100k USSD sessions once they expire):
//  - idle WebSockets: --ws-sockets sockets opened on the oracle's /ws (authenticated, 100 per session) and,
//    by the same client processes, on a bare uWebSockets.js WebSocket server. The sockets are opened in
//    quarters and the server's RSS (from /proc, the clients are other processes) read before and after each,
//    each time after a full GC of the server's main thread, where the sockets live (forced through its
//    inspector): per socket
//    over the whole run (`rssPerOpBytes`: after minus before, divided by the sockets) and over the second half
//    only (`rssPerOpSecondHalfBytes`: what one more socket costs once the heaps have grown to their working
//    size).
//    The server's soft limit on open files is raised to its hard limit; more sockets than that allows are
//    not attempted (the row says how many were asked for).
//  - USSD sessions after they expire: --ussd-rounds rounds of --ussd-sessions whole sessions (the client of
//    the ussd benchmark) on a server whose sessions live 2 s and idle actors 1 s; after each round the run
//    waits until the server reports no live session and no USSD actor in memory (GET /metrics), then for two
//    more expiry sweeps, and reads RSS after a full GC of the main thread. Flat means later rounds leave RSS where the first one left it. RSS is
//    split into anonymous memory (heaps, native allocations) and file pages: LMDB's database is memory-mapped,
//    so the pages a round touched stay resident (and reused by the next round's sessions once the sweep freed
//    them) as file pages. The data file (data.mdb) is read after each round too, with the most session records
//    it held at once during the round (live and expired-not-yet-swept; sampled by this process, a reader of the
//    same environment): LMDB's file is the high-water mark of what it held, so a later round grows it only when
//    its peak exceeds every earlier one's (the sweep's freed pages hold the next round's sessions:
//    test/ussd-disk-reuse.test.ts).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { LMDB_OPTIONS } from '../src/store/env.js';
import { setTimeout as pause } from 'node:timers/promises';
import { ClientPool } from './lib/client-pool.js';
import { measure } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';
import { createSessions, oracleKeys, startOracle, warmInvocation } from './lib/oracle.js';
import { startNode, startServerProcess, withProcess, type BenchProcess, type MemorySample } from './lib/process.js';
import { printRows, row, type Measured, type Row } from './lib/report.js';
import { STEPS, ussdSessions } from './ussd.js';

const SOCKETS_PER_SESSION = 100;
/** Sockets one client process holds at most (each needs a descriptor; and one source address ~28k ports). */
const SOCKETS_PER_CLIENT_PROCESS = 10_000;
/** Descriptors the server keeps for itself (listening socket, LMDB, worker threads' event fds, ...). */
const SERVER_OWN_FILES = 256;
const QUARTERS = 4;
const USSD_TTL_SECONDS = 2;
const ACTOR_IDLE_SECONDS = 1;
const MiB = 2 ** 20;
/** Every process measured here is started with its inspector, to force GCs before reading memory. */
const INSPECT = { inspect: true };

/**
 * The target's memory after a full GC of its main thread (through its inspector): garbage of start-up, of the
 * handshakes or of the requests there is not counted, what is live and what V8 keeps mapped is. The actor
 * hosts' heaps are read as they are.
 */
async function collected(target: BenchProcess): Promise<MemorySample> {
  await target.collectGarbage();
  await pause(500);
  return target.memory();
}

/** How many of `wanted` sockets the target can hold, given its limit on open files. */
function socketsWithin(target: BenchProcess, wanted: number): number {
  const room = target.openFilesLimit() - SERVER_OWN_FILES;
  if (wanted <= room) return wanted;
  const sockets = Math.floor(room / SOCKETS_PER_SESSION) * SOCKETS_PER_SESSION;
  console.log(
    `the server may open ${target.openFilesLimit()} files (hard limit): holding ${sockets} sockets, not ${wanted}`,
  );
  return sockets;
}

async function idleSockets(target: BenchProcess, sessions: string[], invocation?: string): Promise<Measured> {
  const wanted = sessions.length * SOCKETS_PER_SESSION;
  const sockets = socketsWithin(target, wanted);
  const assignments = sessions.flatMap((id) => Array.from({ length: SOCKETS_PER_SESSION }, () => id)).slice(0, sockets);
  const pool = ClientPool.start(Math.max(2, Math.ceil(sockets / SOCKETS_PER_CLIENT_PROCESS)));
  try {
    const samples: MemorySample[] = [await collected(target)];
    const cpuBefore = target.cpuSeconds();
    let seconds = 0;
    let connected = { open: 0, failed: 0, error: undefined as string | undefined };
    const quarter = Math.ceil(assignments.length / QUARTERS);
    for (let q = 0; q < QUARTERS; q++) {
      const started = performance.now();
      const reply = await pool.connect(
        {
          baseUrl: `http://127.0.0.1:${target.port}`,
          transport: 'ws',
          invocation,
          concurrency: 64,
          ownSourceAddresses: true,
        },
        assignments.slice(q * quarter, (q + 1) * quarter),
      );
      seconds += (performance.now() - started) / 1000;
      connected = { open: reply.open, failed: connected.failed + reply.failed, error: connected.error ?? reply.error };
      samples.push(await collected(target));
    }
    const cpu = target.cpuSeconds() - cpuBefore;
    const open = Math.max(1, connected.open);
    if (connected.failed) console.log(`${connected.failed} sockets failed to connect (${connected.error})`);
    const [before, half, after] = [samples[0], samples[QUARTERS / 2], samples[QUARTERS]];
    const perSocket = (from: MemorySample, key: keyof MemorySample, count: number) =>
      Math.round((after[key] - from[key]) / count);
    return {
      unit: 'socket',
      count: connected.open,
      throughput: connected.open / seconds,
      p50Ms: NaN,
      p99Ms: NaN,
      cpuMsPerOp: (cpu * 1000) / open,
      rssBytes: after.rssBytes,
      errors: connected.failed,
      extra: {
        socketsRequested: wanted,
        rssPerOpBytes: perSocket(before, 'rssBytes', open),
        anonPerOpBytes: perSocket(before, 'anonBytes', open),
        rssPerOpSecondHalfBytes: perSocket(half, 'rssBytes', open / 2),
        rssBeforeMiB: before.rssBytes / MiB,
      },
    };
  } finally {
    await pool.close();
  }
}

/** A gauge's value from the server's /metrics (loopback callers may read it without a token). */
async function gauge(server: BenchProcess, line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  return Number(line.exec(text)?.[1] ?? NaN);
}

/** Waits until no USSD session is live and no USSD actor is in memory, then for two more sweeps. */
async function expired(server: BenchProcess): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const live = await gauge(server, /^ussd_sessions_active (\S+)/m);
    const actors = await gauge(server, /^actors_active\{kind="ussd"\} (\S+)/m);
    if (live === 0 && (actors === 0 || Number.isNaN(actors))) break;
    await pause(500);
  }
  await pause(2 * USSD_TTL_SECONDS * 1000 + 500);
}

async function ussdExpiry(options: BenchOptions): Promise<Measured> {
  const server = await startServerProcess(
    { USSD_SESSION_TTL_SECONDS: String(USSD_TTL_SECONDS), ACTOR_IDLE_SECONDS: String(ACTOR_IDLE_SECONDS) },
    INSPECT,
  );
  // This process reads the server's environment as another reader does (the session records' count, O(1)).
  const environment = open({ path: server.dataDir!, ...LMDB_OPTIONS });
  try {
    const start = await collected(server);
    const afterRound: MemorySample[] = [];
    const dataFileMiB: number[] = [];
    const peakStored: number[] = [];
    const records = environment.openDB({ name: 'ussd-sessions-by-start' });
    const stored = () => (records.getStats() as { entryCount: number }).entryCount;
    let sessions = 0;
    let errors = 0;
    let seconds = 0;
    const cpuBefore = server.cpuSeconds();
    for (let round = 0; round < options.ussdRounds; round++) {
      const client = ussdSessions(`expiry${round}`, options.ussdIds);
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, stored())), 100);
      const measured = await measure(server, {
        amount: options.ussdSessions * STEPS.length,
        connections: options.connections,
        requests: client.requests,
      }).finally(() => clearInterval(sampler));
      peakStored.push(peak);
      sessions += client.sessions();
      errors += measured.errors + client.wrong();
      seconds += measured.count / measured.throughput;
      await expired(server);
      const sample = await collected(server);
      afterRound.push(sample);
      dataFileMiB.push(statSync(join(server.dataDir!, 'data.mdb')).size / MiB);
      console.log(
        `after round ${round + 1} (${sessions} sessions): RSS ${(sample.rssBytes / MiB).toFixed(1)} MiB, anonymous ${(sample.anonBytes / MiB).toFixed(1)} MiB, file ${(sample.fileBytes / MiB).toFixed(1)} MiB; data.mdb ${dataFileMiB[round].toFixed(1)} MiB, at most ${peak} session records at once`,
      );
    }
    const first = afterRound[0];
    const last = afterRound[afterRound.length - 1];
    const laterSessions = sessions - sessions / options.ussdRounds;
    // Growth after the first round, per later session: 0 when flat.
    const growth = (key: keyof MemorySample) =>
      laterSessions ? Math.round((last[key] - first[key]) / laterSessions) : NaN;
    return {
      unit: 'session',
      count: sessions,
      throughput: sessions / seconds,
      p50Ms: NaN,
      p99Ms: NaN,
      cpuMsPerOp: ((server.cpuSeconds() - cpuBefore) * 1000) / sessions,
      rssBytes: last.rssBytes,
      errors,
      extra: {
        rssStartMiB: start.rssBytes / MiB,
        rssAfterFirstRoundMiB: first.rssBytes / MiB,
        rssAfterLastRoundMiB: last.rssBytes / MiB,
        anonAfterFirstRoundMiB: first.anonBytes / MiB,
        anonAfterLastRoundMiB: last.anonBytes / MiB,
        fileAfterFirstRoundMiB: first.fileBytes / MiB,
        fileAfterLastRoundMiB: last.fileBytes / MiB,
        dataFileAfterFirstRoundMiB: dataFileMiB[0],
        dataFileAfterLastRoundMiB: dataFileMiB[dataFileMiB.length - 1],
        peakStoredFirstRound: peakStored[0],
        peakStoredLaterRounds: peakStored.length > 1 ? Math.max(...peakStored.slice(1)) : Number.NaN,
        growthPerLaterSessionBytes: growth('rssBytes'),
        anonGrowthPerLaterSessionBytes: growth('anonBytes'),
      },
    };
  } finally {
    await environment.close();
    await server.stop();
  }
}

export async function benchMemory(options: BenchOptions): Promise<Row[]> {
  const sessionCount = Math.max(1, Math.round(options.wsSockets / SOCKETS_PER_SESSION));
  const bareSessions = Array.from({ length: sessionCount }, (_, i) => `bare-${i}`);
  const bare = row(
    'memory',
    'bare uWS WebSocket, idle',
    await withProcess(startNode('dist/bench/baselines/bare-uws-ws.js', {}, [], INSPECT), (target) =>
      idleSockets(target, bareSessions),
    ),
  );
  const keys = await oracleKeys();
  const invocation = await warmInvocation(keys);
  const oracle = row(
    'memory',
    'oracle /ws, idle',
    await withProcess(startOracle(keys, {}, INSPECT), async (server) => {
      const sessions = await createSessions(server, invocation, sessionCount);
      return idleSockets(server, sessions, invocation);
    }),
    bare,
  );
  const expiry = row('memory', `USSD sessions after expiry (${options.ussdRounds} rounds)`, await ussdExpiry(options));
  const rows = [bare, oracle, expiry];
  printRows(
    `Memory: ${sessionCount * SOCKETS_PER_SESSION} idle sockets asked for (${SOCKETS_PER_SESSION} per session); ${options.ussdRounds} rounds of ${options.ussdSessions} USSD sessions`,
    rows,
  );
  return rows;
}
