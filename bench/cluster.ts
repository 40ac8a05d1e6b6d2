// `npm run bench:cluster -- [flags]`: the USSD and chat benchmarks against one LMDB node, three independent LMDB
// nodes (the control: what three processes on these cores cost by themselves) and a local cluster of 3 nodes on a
// 3-server NATS JetStream cluster, in the same run, by the same client code (bench/ussd.ts, bench/lib/sse-load.ts);
// several nodes share the load (connection or caller i -> node i % 3). CPU per operation covers every process of
// a target (for the cluster: nodes and nats-servers, also apart).
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_PARTITIONS, partitionOf } from '../src/cluster/partition-leases.js';
import { startLocalNodes } from '../src/tools/local-nodes.js';
import { findNatsServer, startNatsCluster, type NatsCluster } from '../src/tools/local-nats-cluster.js';
import { positive } from './lib/options.js';
import { createSessions, oracleKeys, startOracle, warmInvocation } from './lib/oracle.js';
import { cpuSecondsOf, portFor, rssBytesOf, type LoadTarget } from './lib/process.js';
import { median, printRows, row, runMeta, writeJson, type Measured, type Row } from './lib/report.js';
import { measureSse } from './lib/sse-load.js';
import { turnRequest } from './sse.js';
import { measureUssd } from './ussd.js';
import { natsMessages } from './lib/nats.js';

const BENCHES = ['ussd', 'chat'] as const;
type Bench = (typeof BENCHES)[number];

export const USAGE = `usage: npm run bench:cluster -- [flags]
  --only ussd,chat     benchmarks to run (BENCH_ONLY; default both)
  --seconds N          length of each load run (BENCH_SECONDS, default 5)
  --connections N,M    autocannon connections for USSD, one set of rows per count (BENCH_CONNECTIONS, default
                       48,288: 16 and 96 per cluster node; a step's cost depends on how many are in flight)
  --streams N          concurrent chat streams (default 24)
  --no-control         leave out the control: 3 independent LMDB nodes, no NATS (what 3 processes on these cores cost)
  --rounds N           measure the control and the cluster in turn N times, side by side (default 1):
                       this machine's speed drifts within minutes, so each round's ratio is taken minutes apart at most
  --idle-seconds N     whole seconds the cluster's cost at rest is measured, before the load (default 3)
  --nats-sync MODE     always (default: NATS fsyncs every write before acknowledging it, as cluster mode requires)
                       or default (the server's own 2-minute flush, for measuring what the sync costs) (BENCH_NATS_SYNC)
  --json PATH          write every row as JSON (BENCH_JSON)`;

interface ClusterBenchOptions {
  only: Bench[];
  seconds: number;
  /** USSD connections: the USSD rows are measured once per count, in this order. */
  connections: number[];
  streams: number;
  /** How long the cluster at rest is measured (CPU and NATS messages per second), before any load. */
  idleSeconds: number;
  /** Also measure 3 independent single-node servers driven like the cluster. */
  control: boolean;
  /** How many times the control and the cluster are each measured, in turn. */
  rounds: number;
  /** `always`: sync_interval always (what cluster mode requires); `default`: the server's periodic flush. */
  natsSync: 'always' | 'default';
  json?: string;
}

export function parseClusterBenchOptions(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): ClusterBenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string', default: env.BENCH_ONLY },
      seconds: { type: 'string', default: env.BENCH_SECONDS },
      connections: { type: 'string', default: env.BENCH_CONNECTIONS },
      streams: { type: 'string' },
      'idle-seconds': { type: 'string' },
      'no-control': { type: 'boolean', default: false },
      rounds: { type: 'string' },
      'nats-sync': { type: 'string', default: env.BENCH_NATS_SYNC },
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
    : [...BENCHES];
  const unknown = only.filter((name) => !(BENCHES as readonly string[]).includes(name));
  if (unknown.length) throw new Error(`--only: unknown benchmark ${unknown.join(', ')} (known: ${BENCHES.join(', ')})`);
  const natsSync = values['nats-sync'] ?? 'always';
  if (natsSync !== 'always' && natsSync !== 'default')
    throw new Error(`--nats-sync: must be always or default, not ${natsSync}`);
  return {
    only: only as Bench[],
    seconds: positive('seconds', values.seconds, 5),
    connections: connectionCounts(values.connections || DEFAULT_CONNECTIONS),
    streams: positive('streams', values.streams, 24),
    idleSeconds: positive('idle-seconds', values['idle-seconds'], 3),
    control: !values['no-control'],
    rounds: positive('rounds', values.rounds, 1),
    natsSync,
    json: values.json || undefined,
  };
}

/**
 * USSD connections by default: the bench's historic 48 (an append carries 8-9 steps), and 288, where appends
 * carry 30 and more and the cluster's CPU per step is about a third of that (bench/README.md, Cluster).
 */
const DEFAULT_CONNECTIONS = '48,288';

/** "48,288" -> [48, 288]; each a positive whole number, each once (a count is a set of rows). */
function connectionCounts(list: string): number[] {
  const counts = list.split(',').map((count) => {
    if (count.trim() === '') throw new Error(`--connections: an empty count in ${JSON.stringify(list)}`);
    return positive('connections', count.trim(), 48);
  });
  return [...new Set(counts)];
}

/** Every node the same shape: one actor host, loopback exempt from the rate limit (as bench/lib/process.ts does). */
const NODE_ENV = { ACTOR_THREADS: '1', RATE_LIMIT_ALLOWLIST: '127.0.0.0/8,::1' };

const sum = (pids: number[], read: (pid: number) => number) => pids.reduce((total, pid) => total + read(pid), 0);

type Target = LoadTarget & { rssMiBByPart?(): Record<string, number>; natsMessages?(): Promise<number> };

/**
 * Several processes as one load target: the nodes' ports, and CPU and memory of all its processes (the nodes,
 * and the NATS servers when given), also per group.
 */
function groupTarget(nodes: readonly { pid: number; port: number }[], nats?: NatsCluster): Target {
  const nodePids = () => nodes.map((node) => node.pid);
  const natsPids = () => nats?.servers.map((server) => server.pid!) ?? [];
  const cpu = (pids: number[]) => sum(pids, (pid) => cpuSecondsOf(pid));
  const rssMiB = (pids: number[]) => Math.round(sum(pids, rssBytesOf) / 2 ** 20);
  return {
    pid: nodes[0].pid,
    port: nodes[0].port,
    ports: nodes.map((node) => node.port),
    cpuSeconds: () => cpu(nodePids()) + cpu(natsPids()),
    mainThreadCpuSeconds: () => sum(nodePids(), (pid) => cpuSecondsOf(pid, true)),
    // The busiest-thread figures of one process mean little summed over several: left out.
    threadCpuSeconds: () => new Map(),
    rssBytes: () => sum(nodePids(), rssBytesOf) + sum(natsPids(), rssBytesOf),
    cpuSecondsByPart: () => ({ nodes: cpu(nodePids()), ...(nats ? { nats: cpu(natsPids()) } : {}) }),
    rssMiBByPart: () => ({ nodesRssMiB: rssMiB(nodePids()), ...(nats ? { natsRssMiB: rssMiB(natsPids()) } : {}) }),
    ...(nats ? { natsMessages: () => natsMessages(nats) } : {}),
  };
}

/** Counters the cluster's nodes export, summed over them (from each one's /metrics, loopback needs no token). */
const CLUSTER_COUNTERS = {
  journalAppends: 'cluster_journal_appends_total{journal="ussd"}',
  journalRecords: 'cluster_journal_records_total{journal="ussd"}',
  routedByLink: 'cluster_routed_calls_total{path="link"}',
  routedByNats: 'cluster_routed_calls_total{path="nats"}',
};
type ClusterCounts = Record<keyof typeof CLUSTER_COUNTERS, number>;

async function clusterCounts(ports: readonly number[]): Promise<ClusterCounts> {
  const texts = await Promise.all(ports.map(async (port) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text()));
  const summed = (series: string) =>
    texts.reduce((total, text) => {
      const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
      return total + Number(line?.split(' ')[1] ?? 0);
    }, 0);
  return Object.fromEntries(
    Object.entries(CLUSTER_COUNTERS).map(([name, series]) => [name, summed(series)]),
  ) as ClusterCounts;
}

/** Over a run: USSD steps per fsynced journal append, and the share of routed calls that took the node link. */
function clusterRatios(bench: Bench, before: ClusterCounts, after: ClusterCounts): Record<string, number> {
  const delta = (name: keyof ClusterCounts) => after[name] - before[name];
  const routed = delta('routedByLink') + delta('routedByNats');
  const appends = bench === 'ussd' ? delta('journalAppends') : 0;
  return {
    ...(appends ? { stepsPerAppend: delta('journalRecords') / appends } : {}),
    ...(routed ? { linkShare: delta('routedByLink') / routed } : {}),
  };
}

/** CPU (all processes) and NATS messages per second of a target doing nothing for `ms`: its fixed cost. */
async function idleCost(
  target: Target,
  ms: number,
): Promise<{ cpuMsPerS: number; natsCpuMsPerS: number; natsMsgsPerS: number }> {
  const [cpu, messages] = [target.cpuSecondsByPart!(), await target.natsMessages?.()];
  await new Promise((resolve) => setTimeout(resolve, ms));
  const natsMsgsPerS = messages === undefined ? 0 : (((await target.natsMessages!()) - messages) * 1000) / ms;
  const after = target.cpuSecondsByPart!();
  const perS = (part: string) => ((after[part] ?? 0) - (cpu[part] ?? 0)) * 1000 * (1000 / ms);
  return { cpuMsPerS: perS('nodes') + perS('nats'), natsCpuMsPerS: perS('nats'), natsMsgsPerS };
}

/**
 * Before measuring, on every target alike: dials one session in each of the cluster's partitions, spread over the
 * target's nodes. In cluster mode an actor host opens its streams and buckets on its first USSD call, and loads a
 * partition of the sessions journal (a claim, a fence per other writer, a read of the stream) on its first session
 * there: once per ownership, not per step, so the run measures the steps that follow.
 */
async function warmUssd(target: Target, label: string): Promise<void> {
  const ids = new Map<number, string>();
  for (let i = 0; ids.size < DEFAULT_PARTITIONS; i++) {
    const id = `warm-${label}-${process.pid}-${i}`;
    if (!ids.has(partitionOf(id, DEFAULT_PARTITIONS))) ids.set(partitionOf(id, DEFAULT_PARTITIONS), id);
  }
  const sessions = [...ids.values()];
  const dial = async (sessionId: string, i: number) => {
    const body = JSON.stringify({ sessionId, serviceCode: '*123#', phoneNumber: '+254700000001', text: '' });
    const response = await fetch(`http://127.0.0.1:${portFor(target, i)}/api/ussd`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await response.text();
  };
  for (let i = 0; i < sessions.length; i += 32)
    await Promise.all(sessions.slice(i, i + 32).map((id, j) => dial(id, i + j)));
}

/** The key of a USSD run's results: one per connection count. */
const ussdCase = (connections: number) => `ussd ${connections}`;

/**
 * Both benchmarks against one target; `label` names its sessions. `warm`: dial every partition first (a target's
 * first round; later rounds find them loaded).
 */
async function measureTarget(
  target: Target,
  options: ClusterBenchOptions,
  invocation: string,
  label: string,
  warm = true,
): Promise<Map<string, Measured>> {
  const results = new Map<string, Measured>();
  const withRss = (measured: Measured): Measured => ({
    ...measured,
    extra: { ...measured.extra, ...target.rssMiBByPart?.() },
  });
  // NATS messages (in + out, all servers) over the run per operation; counted around the run, so the set-up of a
  // run's first requests and the lease heartbeats of those seconds count too. The nodes' counters are scraped
  // outside the measured window only (a scrape makes each front door read the sessions journal for its gauge), so
  // the USSD row's steps per append also count the warm-up's dials (a hundred or so against thousands of steps).
  let counts = target.natsMessages ? await clusterCounts(target.ports!) : undefined;
  const counted = async (bench: Bench, run: () => Promise<Measured>): Promise<Measured> => {
    const before = await target.natsMessages?.();
    const measured = await run();
    if (before === undefined || !counts) return measured;
    const messages = (await target.natsMessages!()) - before;
    const after = await clusterCounts(target.ports!);
    const ratios = clusterRatios(bench, counts, after);
    counts = after;
    return {
      ...measured,
      extra: { ...measured.extra, natsMsgsPerOp: measured.count ? messages / measured.count : NaN, ...ratios },
    };
  };
  if (options.only.includes('ussd')) {
    if (warm) await warmUssd(target, label);
    for (const connections of options.connections)
      results.set(
        ussdCase(connections),
        withRss(
          await counted('ussd', () =>
            measureUssd(target, { ...options, connections, ussdIds: 'gateway' }, `ussd-${label}-${connections}`),
          ),
        ),
      );
  }
  if (options.only.includes('chat')) {
    // One session per caller (a second turn on a session aborts the first), created through the node it streams to.
    const sessions = await createSessions(target, invocation, options.streams);
    const { headers, body } = turnRequest(invocation);
    results.set(
      'chat',
      withRss(
        await counted('chat', () =>
          measureSse(target, {
            seconds: options.seconds,
            concurrency: options.streams,
            request: (index) => ({ path: `/messages/${sessions[index]}`, headers, body }),
          }),
        ),
      ),
    );
  }
  return results;
}

/** The cluster under test: 3 NATS servers and 3 nodes on them; `stop` ends both. */
async function startCluster(
  natsServer: string,
  keys: Awaited<ReturnType<typeof oracleKeys>>,
  options: ClusterBenchOptions,
): Promise<{ target: Target; url: string; stop(): Promise<void> }> {
  const nats = await startNatsCluster({ binary: natsServer, syncAlways: options.natsSync === 'always' });
  try {
    const cluster = await startLocalNodes({
      natsUrl: nats.urls,
      natsMonitorUrl: nats.monitorUrls,
      keys: { ORACLE_PRIVATE_KEY: keys.oracleKey },
      // Unsynced NATS is refused at start-up unless accepted, as it is here to measure the sync's cost.
      env: {
        ...NODE_ENV,
        LOG_LEVEL: 'warn',
        ...(options.natsSync === 'default' ? { NATS_ALLOW_UNSYNCED_ACKS: 'true' } : {}),
      },
      // As bench/lib/process.ts gives them to the single node and the control (e.g. --cpu-prof).
      nodeArgs: (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    });
    return {
      target: groupTarget(cluster.nodes, nats),
      url: cluster.nodes[0].url,
      stop: () => cluster.stop().finally(() => nats.stop()),
    };
  } catch (error) {
    await nats.stop();
    throw error;
  }
}

export async function main(argv: string[]): Promise<void> {
  const options = parseClusterBenchOptions(argv);
  if (options === 'help') return void console.log(USAGE);
  const natsServer = findNatsServer();
  if (!natsServer)
    throw new Error('nats-server is not installed: scripts/install-nats-server.sh as root (nats-server >= 2.10.23)');
  const keys = await oracleKeys();
  const invocation = await warmInvocation(keys);
  const meta = runMeta({ ...options, bench: 'cluster' });
  console.log(
    `# Cluster benchmark (${meta.date}, commit ${meta.commit}, node ${meta.node}, ${meta.cpus} × ${meta.cpuModel}, load average ${meta.loadAverage.join(' ')})`,
  );

  const single = await startOracle(keys, NODE_ENV);
  let one: Map<string, Measured>;
  try {
    one = await measureTarget(single, options, invocation, 'single');
  } finally {
    await single.stop();
  }

  // The control: three nodes as independent single-node servers (own LMDB, no NATS), driven like the cluster.
  // What it costs over one node is three processes sharing this machine's cores, not cluster mode. It runs beside
  // the cluster, and the two are measured in turn (the order alternating by round): this machine's speed drifts
  // within minutes, so a ratio is only taken between runs made minutes apart at most. While one is measured the
  // other idles (the cluster at rest: the CPU per second printed below).
  const controlServers = options.control ? await Promise.all([0, 1, 2].map(() => startOracle(keys, NODE_ENV))) : [];
  const controlRounds: Map<string, Measured>[] = [];
  const clusterRounds: Map<string, Measured>[] = [];
  let cluster: Awaited<ReturnType<typeof startCluster>> | undefined;
  try {
    cluster = await startCluster(natsServer, keys, options);
    const health = (await (await fetch(`${cluster.url}/health`)).json()) as { cluster?: { state?: string } };
    meta.options.clusterState = health.cluster?.state ?? 'unknown';
    console.log(`cluster state (from /health): ${meta.options.clusterState}`);
    const { target } = cluster;
    const idle = await idleCost(target, options.idleSeconds * 1000);
    console.log(
      `cluster at rest: ${idle.cpuMsPerS.toFixed(1)} ms of CPU per second (NATS servers ${idle.natsCpuMsPerS.toFixed(1)}) and ${idle.natsMsgsPerS.toFixed(0)} NATS messages per second (leases, heartbeats, Raft)`,
    );
    const measureCluster = async (round: number) => {
      const measured = await measureTarget(target, options, invocation, `cluster-${round}`, round === 0);
      for (const one of measured.values())
        Object.assign((one.extra ??= {}), {
          idleCpuMsPerS: idle.cpuMsPerS,
          idleNatsCpuMsPerS: idle.natsCpuMsPerS,
          idleNatsMsgsPerS: idle.natsMsgsPerS,
        });
      clusterRounds.push(measured);
    };
    const measureControl = async (round: number) => {
      if (options.control)
        controlRounds.push(
          await measureTarget(groupTarget(controlServers), options, invocation, `control-${round}`, round === 0),
        );
    };
    for (let round = 0; round < options.rounds; round++) {
      if (round % 2 === 0) await measureControl(round).then(() => measureCluster(round));
      else await measureCluster(round).then(() => measureControl(round));
    }
  } finally {
    await Promise.all([cluster?.stop(), ...controlServers.map((server) => server.stop())]);
  }

  // One group of rows per case: USSD once per connection count (the first count's rows keep their plain names, so
  // runs compare with earlier ones), then chat; in each, the control and the cluster once per round.
  const cases = [
    ...(options.only.includes('ussd')
      ? options.connections.map((connections, i) => ({
          bench: 'ussd' as const,
          key: ussdCase(connections),
          suffix: i === 0 ? '' : `, ${connections} connections`,
          title: `USSD: ${connections} connections, ${options.seconds} s each, whole sessions`,
        }))
      : []),
    ...(options.only.includes('chat')
      ? [
          {
            bench: 'chat' as const,
            key: 'chat',
            suffix: '',
            title: `Chat (SSE turns, built-in agent): ${options.streams} concurrent streams, ${options.seconds} s each`,
          },
        ]
      : []),
  ];
  const rows: Row[] = [];
  const clusterName = `3 nodes + 3 NATS (JetStream${options.natsSync === 'default' ? ', not synced' : ''})`;
  for (const { bench, key, suffix, title } of cases) {
    const base = row(bench, `one node, LMDB${suffix}`, one.get(key)!);
    const group = [base];
    const ratios: number[] = [];
    clusterRounds.forEach((measured, round) => {
      const named = (name: string) => `${name}${suffix}${round === 0 ? '' : `, round ${round + 1}`}`;
      const controlRow =
        controlRounds[round] &&
        row(bench, named('3 nodes, own LMDB each, no NATS (control)'), controlRounds[round].get(key)!, base);
      const clusterRow = row(bench, named(clusterName), measured.get(key)!, base);
      // The figure cluster mode's cost is judged by: its CPU per operation over the control's, same round.
      if (controlRow) ratios.push((clusterRow.extra.cpuVsControl = clusterRow.cpuMsPerOp / controlRow.cpuMsPerOp));
      group.push(...(controlRow ? [controlRow] : []), clusterRow);
    });
    printRows(`${title} (ratios: row / one node; cpuVsControl: cluster / control)`, group);
    if (ratios.length > 1)
      console.log(
        `cpuVsControl by round: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)})`,
      );
    rows.push(...group);
  }
  if (options.json) writeJson(options.json, meta, rows);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
