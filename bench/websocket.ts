// The event channel under many concurrent sockets, next to Socket.IO on a plain node:http server (the
// baseline) in the same run. Each run opens BENCH_WS_CONNECTIONS sockets from several client processes,
// BENCH_WS_PER_SESSION sockets on each session, then triggers chat turns for --seconds: on the oracle a
// real `POST /messages/:id` ("call me Bench": the built-in agent calls set_user_preferences, and the turn
// publishes 7 events from its actor, each fanned out to every socket of the session); on the baseline
// `POST /emit/:room`, which emits the same 7 events into the room. Printed per run: connections held,
// connect time, turns/s, events/s delivered (counted by the clients), server memory per connection (RSS
// after connecting minus before, divided by the connections), server CPU per delivered event, and the
// ratios to the baseline. Runs: baseline, the oracle's native /ws (uWS pub/sub), the oracle's Socket.IO.
// The oracle's CPU per event includes the turns themselves (HTTP, UCAN, actor, agent, LMDB), the baseline's
// only the emits; on a small machine the client processes compete with the server for the same cores.
// `npm run bench -- --only fanout` (not in the default set: tens of seconds). --seconds sets the turns' time;
// BENCH_WS_CONNECTIONS (10000), BENCH_WS_PER_SESSION (100), BENCH_WS_CLIENT_PROCESSES (4),
// BENCH_WS_TRIGGERS (concurrent turn loops, 8).
import { printMarkdownTable } from './lib/table.js';
import { setTimeout as pause } from 'node:timers/promises';
import { formatKey, generateKey, mintInvocation } from '../src/tools/mint-ucan.js';
import { ClientPool } from './lib/client-pool.js';
import type { ClientTransport } from './lib/event-clients.js';
import type { BenchOptions } from './lib/options.js';
import { startNode, startServerProcess, type BenchProcess } from './lib/process.js';
import { row, type Row } from './lib/report.js';

export interface WebsocketRunResult {
  name: string;
  connections: number;
  held: number;
  failed: number;
  connectSeconds: number;
  turnsPerSecond: number;
  events: number;
  eventsPerSecond: number;
  /** Events clients received / events the turns should have delivered. */
  deliveredShare: number;
  rssPerConnectionBytes: number;
  /** Server RSS at the end of the run. */
  rssBytes: number;
  serverCpuMicrosPerEvent: number;
}

const EVENTS_PER_TURN = 7;

interface RunOptions {
  transport: ClientTransport;
  sessions: string[];
  perSession: number;
  invocation?: string;
  /** One turn on a session; resolves when the server answered it. */
  trigger(sessionId: string): Promise<void>;
  seconds: number;
  triggerLoops: number;
  processes: number;
}

async function run(name: string, target: BenchProcess, options: RunOptions): Promise<WebsocketRunResult> {
  const assignments = options.sessions.flatMap((sessionId) =>
    Array.from({ length: options.perSession }, () => sessionId),
  );
  const limit = target.openFilesLimit();
  if (limit < assignments.length + 64) console.log(`warning: the server may open only ${limit} files; raise ulimit -n`);

  const pool = ClientPool.start(options.processes);
  try {
    const rssBefore = target.rssBytes();
    const connectStarted = performance.now();
    const connected = await pool.connect(
      {
        baseUrl: `http://127.0.0.1:${target.port}`,
        transport: options.transport,
        invocation: options.invocation,
        concurrency: 64,
      },
      assignments,
    );
    const connectSeconds = (performance.now() - connectStarted) / 1000;
    if (connected.failed > 0)
      console.log(`${name}: ${connected.failed} sockets failed to connect (${connected.error})`);
    await pause(1000);
    const rssAfter = target.rssBytes();

    const before = await pool.count();
    const cpuBefore = target.cpuSeconds();
    const started = performance.now();
    const deadline = started + options.seconds * 1000;
    let turns = 0;
    // One loop per group of sessions, so two turns never run on one session at once (a newer one would abort it).
    const loop = async (lane: number) => {
      for (let i = lane; performance.now() < deadline; i += options.triggerLoops) {
        await options.trigger(options.sessions[i % options.sessions.length]);
        turns++;
      }
    };
    await Promise.all(
      Array.from({ length: Math.min(options.triggerLoops, options.sessions.length) }, (_, lane) => loop(lane)),
    );
    // Let the fan-out finish: wait until the clients' count stops moving.
    let last = -1;
    let now = await pool.count();
    for (let i = 0; i < 50 && now.events !== last; i++) {
      last = now.events;
      await pause(200);
      now = await pool.count();
    }
    const seconds = (performance.now() - started) / 1000;
    const events = now.events - before.events;
    const cpu = target.cpuSeconds() - cpuBefore;
    return {
      name,
      connections: assignments.length,
      held: now.open,
      failed: connected.failed,
      connectSeconds,
      turnsPerSecond: turns / seconds,
      events,
      rssBytes: target.rssBytes(),
      eventsPerSecond: events / seconds,
      deliveredShare: turns ? events / (turns * EVENTS_PER_TURN * options.perSession) : 0,
      rssPerConnectionBytes: (rssAfter - rssBefore) / Math.max(1, connected.open),
      serverCpuMicrosPerEvent: events ? (cpu * 1e6) / events : NaN,
    };
  } finally {
    await pool.close();
  }
}

function printWebsocketTable(title: string, baseline: WebsocketRunResult, rows: WebsocketRunResult[]): void {
  const columns = [
    'run',
    'sockets held',
    'connect s',
    'turns/s',
    'events/s delivered',
    'delivered',
    'server RSS / socket',
    'server CPU µs / event',
    'events/s vs baseline',
    'RSS/socket vs baseline',
  ];
  printMarkdownTable(
    title,
    columns,
    [baseline, ...rows].map((r) => [
      r.name,
      `${r.held}/${r.connections}`,
      r.connectSeconds.toFixed(1),
      r.turnsPerSecond.toFixed(0),
      r.eventsPerSecond.toFixed(0),
      `${(r.deliveredShare * 100).toFixed(1)}%`,
      `${(r.rssPerConnectionBytes / 1024).toFixed(1)} KiB`,
      r.serverCpuMicrosPerEvent.toFixed(2),
      `${(r.eventsPerSecond / baseline.eventsPerSecond).toFixed(2)}x`,
      `${(r.rssPerConnectionBytes / baseline.rssPerConnectionBytes).toFixed(2)}x`,
    ]),
  );
}

async function post(url: string, headers: Record<string, string>, body: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers, body });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`POST ${url} answered ${res.status}`);
}

/** The fan-out runs as report rows: one operation is one delivered event. */
function asRow(result: WebsocketRunResult, baseline?: Row): Row {
  return row(
    'fanout',
    result.name,
    {
      unit: 'event',
      count: result.events,
      throughput: result.eventsPerSecond,
      p50Ms: NaN,
      p99Ms: NaN,
      cpuMsPerOp: result.serverCpuMicrosPerEvent / 1000,
      rssBytes: result.rssBytes,
      errors: result.failed,
      extra: {
        sockets: result.held,
        rssPerSocketBytes: result.rssPerConnectionBytes,
        turnsPerSecond: result.turnsPerSecond,
        delivered: result.deliveredShare,
      },
    },
    baseline,
  );
}

export async function benchWebsocket(options: BenchOptions): Promise<Row[]> {
  const seconds = options.seconds;
  const connections = Number(process.env.BENCH_WS_CONNECTIONS ?? 10_000);
  const perSession = Math.min(connections, Number(process.env.BENCH_WS_PER_SESSION ?? 100));
  const processes = Number(process.env.BENCH_WS_CLIENT_PROCESSES ?? 4);
  const triggerLoops = Number(process.env.BENCH_WS_TRIGGERS ?? 8);
  const sessionCount = Math.max(1, Math.round(connections / perSession));
  const common = { perSession, seconds, triggerLoops, processes };

  // Baseline: Socket.IO on node:http, rooms named like sessions.
  const baselineServer = await startNode('dist/bench/baselines/socketio-node.js');
  const rooms = Array.from({ length: sessionCount }, (_, i) => `room-${i}`);
  const baseUrl = `http://127.0.0.1:${baselineServer.port}`;
  let baseline: WebsocketRunResult;
  try {
    baseline = await run('Socket.IO on node:http (baseline)', baselineServer, {
      ...common,
      transport: 'socket.io',
      sessions: rooms,
      trigger: (room) => post(`${baseUrl}/emit/${room}`, {}, ''),
    });
  } finally {
    await baselineServer.stop();
  }

  const oracleKey = await generateKey();
  const user = await generateKey();
  const body = JSON.stringify({ message: 'call me Bench' });

  const rows: WebsocketRunResult[] = [];
  for (const [name, transport] of [
    ['oracle native /ws (uWS pub/sub)', 'ws'],
    ['oracle Socket.IO on uWS (/socket.io/)', 'socket.io'],
  ] as const) {
    // Invocations live at most UCAN_AUTH_MAX_TTL_SECONDS (900 s by default): one per run.
    const invocation = await mintInvocation({ issuer: user, audience: oracleKey.did(), ttlSeconds: 900 });
    const headers = {
      authorization: `Bearer ${invocation}`,
      'x-auth-type': 'ucan',
      'content-type': 'application/json',
    };
    // A fresh server per run, so its memory before connecting is comparable.
    const server = await startServerProcess({ ORACLE_PRIVATE_KEY: formatKey(oracleKey) });
    try {
      const url = `http://127.0.0.1:${server.port}`;
      const sessions: string[] = [];
      for (let i = 0; i < sessionCount; i++) {
        const res = await fetch(`${url}/sessions`, { method: 'POST', headers });
        if (res.status !== 201) throw new Error(`POST /sessions answered ${res.status}`);
        sessions.push(((await res.json()) as { sessionId: string }).sessionId);
      }
      rows.push(
        await run(name, server, {
          ...common,
          transport,
          sessions,
          invocation,
          trigger: (sessionId) => post(`${url}/messages/${sessionId}`, headers, body),
        }),
      );
    } finally {
      await server.stop();
    }
  }

  printWebsocketTable(
    `Event channel: ${connections} sockets (${perSession} per session, ${processes} client processes), ${seconds} s of turns, ${EVENTS_PER_TURN} events per turn`,
    baseline,
    rows,
  );
  const baselineRow = asRow(baseline);
  return [baselineRow, ...rows.map((r) => asRow(r, baselineRow))];
}
