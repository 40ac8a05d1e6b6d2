// Thread: main (tooling)
// A local NATS cluster with JetStream on loopback, for `npm run cluster` and the tests.
// Each server gets its own ports, store dir and routes to the others; ready means every server names the same
// JetStream meta leader (read from its monitoring endpoint /jsz), not a fixed wait.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, parentDeathCommand, type LocalHost } from './local-processes.js';

export interface NatsServerProcess {
  readonly name: string;
  readonly clientPort: number;
  readonly clusterPort: number;
  readonly monitorPort: number;
  readonly url: string;
  /** Running now (false after kill until restart). */
  readonly running: boolean;
  /** Process id of the current process (for CPU and memory readings from /proc). */
  readonly pid: number | undefined;
  /** Everything it logged (stderr), for diagnosing a failed start. */
  output(): string;
}

export interface NatsCluster {
  readonly servers: readonly NatsServerProcess[];
  /** Client URLs of all servers, comma-separated (the form NATS_URL takes). */
  readonly urls: string;
  /** Monitoring URLs of all servers, comma-separated (the form NATS_MONITOR_URL takes). */
  readonly monitorUrls: string;
  /** `kill -9` of one server; resolves when its process has exited. */
  kill(index: number): Promise<void>;
  /**
   * Starts a killed server again with the same ports and store dir; resolves when it is back in the cluster, or at
   * once with `wait: false` (a server alone cannot be healthy: its JetStream needs a quorum).
   */
  restart(index: number, options?: { wait?: boolean }): Promise<void>;
  /** Resolves when every running server names the same JetStream meta leader, which it returns. */
  waitForMetaLeader(timeoutMs?: number): Promise<string>;
  /** Stops every server (SIGTERM, then SIGKILL after a bound) and removes the store dirs. */
  stop(): Promise<void>;
}

export interface NatsClusterOptions {
  size?: number;
  binary?: string;
  /** Name of the cluster (route handshake). */
  name?: string;
  /** Directory holding each server's store; default a fresh temp dir removed on stop. */
  dataDir?: string;
  /** First client, route and monitoring port (server i gets base + i); default: free ports picked at random. */
  basePorts?: { client: number; cluster: number; monitor: number };
  /** Called with each line a server writes to stderr. */
  onLog?: (server: string, line: string) => void;
  /**
   * Each server in its own process group, so a terminal's Ctrl-C (sent to the whole foreground group) reaches only
   * the launcher, which then stops the nodes before NATS (npm run cluster); default false, so a test runner killed
   * by a signal takes its servers with it.
   */
  ownProcessGroup?: boolean;
  /**
   * `sync_interval: always` (the default): every JetStream write is fsynced before it is acknowledged, as cluster
   * mode requires (nats-server >= 2.10). False leaves the server's default (a flush every 2 minutes), for measuring
   * what the sync costs.
   */
  syncAlways?: boolean;
  /**
   * Where server i runs: its address (default 127.0.0.1) and a command prefix its process is started under (e.g.
   * `ip netns exec NS`, each server a host of its own in a network namespace, for the partition tests).
   */
  hosts?: readonly LocalHost[];
}

/** The nats-server binary on PATH, or Debian's /usr/sbin/nats-server (not on every user's PATH); undefined if neither. */
export function findNatsServer(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim();
  } catch {
    return existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : undefined;
  }
}

/**
 * How long a first start (empty stores) may take to form its meta group before it is started again, and how often.
 * Healthy starts took 0.19-0.63 s in 19 of 20 (2026-11-29, a test suite beside them) and up to 2.3 s with both
 * cores busy; the twentieth never formed (below). A wait of 10 s cost every such start 10 s.
 */
const FRESH_START_WAIT_MS = 4_000;
const FRESH_START_ATTEMPTS = 3;
interface ServerSlot {
  name: string;
  address: string;
  command: readonly string[];
  clientPort: number;
  clusterPort: number;
  monitorPort: number;
  configPath: string;
  child?: ChildProcess;
  exited?: Promise<void>;
  log: string;
}

/** What /jsz says of the JetStream meta group. */
interface JetStreamState {
  meta_cluster?: {
    leader?: string;
    cluster_size?: number;
    replicas?: { name: string; current?: boolean; offline?: boolean }[];
  };
}

async function jsz(address: string, monitorPort: number): Promise<JetStreamState | undefined> {
  try {
    const response = await fetch(`http://${address}:${monitorPort}/jsz`, { signal: AbortSignal.timeout(1_000) });
    return response.ok ? ((await response.json()) as JetStreamState) : undefined;
  } catch {
    return undefined;
  }
}

export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const binary = options.binary ?? 'nats-server';
  const clusterName = options.name ?? 'sar';
  const root = options.dataDir ?? mkdtempSync(join(tmpdir(), 'sar-nats-'));
  const ownsRoot = options.dataDir === undefined;

  const base = options.basePorts;
  const picked = base ? [] : await freePorts(3 * size);
  const slots: ServerSlot[] = [];
  for (let i = 0; i < size; i++) {
    slots.push({
      name: `n${i + 1}`,
      address: options.hosts?.[i]?.address ?? '127.0.0.1',
      command: options.hosts?.[i]?.command ?? [],
      clientPort: base ? base.client + i : picked[3 * i],
      clusterPort: base ? base.cluster + i : picked[3 * i + 1],
      monitorPort: base ? base.monitor + i : picked[3 * i + 2],
      configPath: join(root, `n${i + 1}.conf`),
      log: '',
    });
  }
  for (const slot of slots) {
    const routes = slots
      .filter((other) => other !== slot)
      .map((other) => `nats-route://${other.address}:${other.clusterPort}`);
    writeFileSync(
      slot.configPath,
      [
        `server_name: ${slot.name}`,
        `listen: ${slot.address}:${slot.clientPort}`,
        `http: ${slot.address}:${slot.monitorPort}`,
        `jetstream { store_dir: ${JSON.stringify(join(root, slot.name))}, max_memory_store: 64MB, max_file_store: 1GB${options.syncAlways === false ? '' : ', sync_interval: always'} }`,
        // One server is no cluster (nats-server refuses a JetStream cluster without routes).
        size > 1
          ? `cluster { name: ${clusterName}, listen: ${slot.address}:${slot.clusterPort}, routes: [${routes.join(', ')}] }`
          : '',
        '',
      ].join('\n'),
    );
  }

  const launch = (slot: ServerSlot) => {
    const [file, ...args] = [...parentDeathCommand(), ...slot.command, binary, '-c', slot.configPath];
    const child = spawn(file, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: options.ownProcessGroup ?? false,
    });
    slot.child = child;
    slot.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    let partial = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      slot.log += chunk;
      if (slot.log.length > 200_000) slot.log = slot.log.slice(-100_000);
      if (!options.onLog) return;
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) options.onLog(slot.name, line);
    });
  };

  const running = (slot: ServerSlot) =>
    slot.child !== undefined && slot.child.exitCode === null && slot.child.signalCode === null;

  const waitForMetaLeader = async (timeoutMs = 30_000): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const live = slots.filter(running);
      const states = await Promise.all(live.map((slot) => jsz(slot.address, slot.monitorPort)));
      // A lone server has no meta group: its JetStream answering is ready.
      if (size === 1 && states[0] !== undefined) return live[0].name;
      const leaders = states.map((state) => state?.meta_cluster?.leader);
      // A dead leader is still named by the survivors until they elect a new one: it does not count.
      const agreed = leaders[0];
      // ...and its peers current: a new replicated stream is placed only on peers the leader sees current, so a
      // cluster whose servers are still catching up answers "no suitable peers for placement".
      const current = (state: JetStreamState | undefined) =>
        1 + (state?.meta_cluster?.replicas ?? []).filter((peer) => peer.current && !peer.offline).length;
      const leaderState = states[live.findIndex((slot) => slot.name === agreed)];
      if (
        agreed &&
        live.some((slot) => slot.name === agreed) &&
        leaders.every((leader) => leader === agreed) &&
        current(leaderState) >= live.length
      )
        return agreed;
      const dead = slots.find(
        (slot) => slot.child && !running(slot) && slot.child.exitCode !== null && slot.child.exitCode !== 0,
      );
      if (dead)
        throw new Error(`nats-server ${dead.name} exited with ${dead.child!.exitCode}:\n${dead.log.slice(-2_000)}`);
      if (Date.now() > deadline) {
        // What each server made of the meta group (its leader, size, peers) and its log's tail: a group that does
        // not re-form after a restart with stores (no leader, a wrong size, a peer never current) is told apart
        // from one that is only slow.
        const views = slots.map((slot) => {
          const meta = states[live.indexOf(slot)]?.meta_cluster;
          if (!running(slot)) return `${slot.name}: not running`;
          if (!meta) return `${slot.name}: /jsz did not answer`;
          const peers = (meta.replicas ?? [])
            .map((peer) => `${peer.name}${peer.offline ? ' offline' : peer.current ? '' : ' not current'}`)
            .join(', ');
          return `${slot.name}: leader ${meta.leader ?? 'none'}, cluster_size ${meta.cluster_size}, peers [${peers}]`;
        });
        throw new Error(
          `no JetStream meta leader named by every running server and seeing them current within ${timeoutMs} ms:\n${views.join('\n')}\n${slots.map((s) => `${s.name} log: ${s.log.slice(-1_500)}`).join('\n')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  /** `/healthz` answers 200 once the server's JetStream is current with the cluster (meta and its assets). */
  const waitForHealthy = async (slot: ServerSlot, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ok = await fetch(`http://${slot.address}:${slot.monitorPort}/healthz`, {
        signal: AbortSignal.timeout(1_000),
      })
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) return;
      if (!running(slot)) throw new Error(`nats-server ${slot.name} exited while starting:\n${slot.log.slice(-2_000)}`);
      if (Date.now() > deadline)
        throw new Error(`nats-server ${slot.name} not healthy within ${timeoutMs} ms:\n${slot.log.slice(-2_000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stopSlot = async (slot: ServerSlot, signal: NodeJS.Signals) => {
    if (!slot.child || !running(slot)) return;
    slot.child.kill(signal);
    const timer = setTimeout(() => slot.child?.kill('SIGKILL'), 5_000);
    await slot.exited;
    clearTimeout(timer);
  };

  // If this process ends without stop() (a failed test, Ctrl-C during start-up), its servers must not outlive it
  // (a death that runs no handler: parentDeathCommand).
  const killAll = () => {
    for (const slot of slots) if (running(slot)) slot.child!.kill('SIGKILL');
  };
  process.on('exit', killAll);

  let stopped = false;
  const cluster: NatsCluster = {
    servers: slots.map((slot) => ({
      name: slot.name,
      clientPort: slot.clientPort,
      clusterPort: slot.clusterPort,
      monitorPort: slot.monitorPort,
      url: `nats://${slot.address}:${slot.clientPort}`,
      get running() {
        return running(slot);
      },
      get pid() {
        return slot.child?.pid;
      },
      output: () => slot.log,
    })),
    urls: slots.map((slot) => `nats://${slot.address}:${slot.clientPort}`).join(','),
    monitorUrls: slots.map((slot) => `http://${slot.address}:${slot.monitorPort}`).join(','),
    kill: (index) => stopSlot(slots[index], 'SIGKILL'),
    async restart(index, restartOptions = {}) {
      const slot = slots[index];
      if (running(slot)) throw new Error(`nats-server ${slot.name} is still running`);
      launch(slot);
      if (restartOptions.wait === false) return;
      await waitForHealthy(slot);
      await waitForMetaLeader();
    },
    waitForMetaLeader,
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(slots.map((slot) => stopSlot(slot, 'SIGTERM')));
      process.off('exit', killAll);
      // The promise API's rm, not rmSync: it unlinks the stores' few hundred files concurrently (0.1-0.3 s where
      // rmSync took 2 s with the disk busy).
      if (ownsRoot) await rm(root, { recursive: true, force: true });
    },
  };

  // A first start of servers that all come up at once sometimes forms its JetStream meta group without one of
  // them (nats-server 2.10.27: the leader's group has cluster_size 2 and the third never joins, so R3 streams are
  // never placed), or with no leader at all. Seen in about 1 start in 20 with both cores busy, and on a quiet
  // machine too; a healthy start takes 0.2-2.3 s. Empty stores are safe to start again: such a start is retried.
  const fresh = slots.every((slot) => !existsSync(join(root, slot.name)));
  try {
    for (let attempt = 1; ; attempt++) {
      for (const slot of slots) launch(slot);
      const retryable = fresh && size > 1 && attempt < FRESH_START_ATTEMPTS;
      try {
        await waitForMetaLeader(retryable ? FRESH_START_WAIT_MS : undefined);
        break;
      } catch (error) {
        if (!retryable || slots.some((slot) => !running(slot))) throw error;
        process.stderr.write(
          `nats cluster in ${root}: no meta group of all ${size} servers within ${FRESH_START_WAIT_MS} ms (attempt ${attempt}); starting it again from empty stores\n`,
        );
        await Promise.all(slots.map((slot) => stopSlot(slot, 'SIGKILL')));
        for (const slot of slots) {
          rmSync(join(root, slot.name), { recursive: true, force: true });
          slot.log = '';
        }
      }
    }
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
