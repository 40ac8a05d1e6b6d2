// Thread: main (tooling)
// Real server processes (`node dist/src/app/main.js`) in cluster mode on loopback, for the
// tests, `npm run cluster` and bench/cluster. Each node has its own NODE_ID, DATA_DIR and port and the keys every
// node must share; ready means its /health answers 200 (NATS connected, JetStream answering) with the pid of the
// process launched (not another server on the port), not a fixed wait.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatKey, generateKey } from '../oracle/auth/mint.js';
import { freePorts, parentDeathCommand, type LocalHost } from './local-processes.js';

export interface NodeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LocalNode {
  readonly index: number;
  readonly nodeId: string;
  readonly port: number;
  /** `http://<address>:<port>` (127.0.0.1 unless `hosts` says otherwise) */
  readonly url: string;
  readonly dataDir: string;
  /** Process id of the current process (changes on restart). */
  readonly pid: number;
  /** Running now (false once it exited, until restart). */
  readonly running: boolean;
  /** Resolves when the current process exits (a new promise after restart). */
  readonly exited: Promise<NodeExit>;
  /**
   * Sends `signal` (default SIGKILL, as `kill -9`). For a signal that ends the process, resolves once it exited;
   * SIGSTOP/SIGCONT resolve at once.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again with the same NODE_ID, DATA_DIR and port (stopping it first if it runs); resolves when healthy. */
  restart(): Promise<void>;
  /** The last lines it wrote (stdout and stderr: pino JSON lines), for failure messages. */
  log(): string;
}

export interface LocalNodes {
  readonly nodes: readonly LocalNode[];
  /** The keys every node shares (given or generated). */
  readonly keys: { PIN_ENCRYPTION_KEY: string; ORACLE_PRIVATE_KEY: string };
  /** Stops every node (SIGTERM, then SIGKILL after `stopTimeoutMs`) and removes the data dirs it created. */
  stop(): Promise<void>;
}

export interface LocalNodesOptions {
  /** NATS_URL for every node (comma-separated client URLs, e.g. `NatsCluster.urls`). */
  natsUrl: string;
  /** NATS_MONITOR_URL for every node (e.g. `NatsCluster.monitorUrls`): the nodes check the servers fsync before acknowledging. */
  natsMonitorUrl?: string;
  /** Number of nodes; default 3. */
  count?: number;
  /** Port of each node; default free loopback ports picked now (kept across restarts). */
  ports?: readonly number[];
  /** NODE_ID of node i is `${nodeIdPrefix}${i + 1}`; default `node-`. */
  nodeIdPrefix?: string;
  /** Shared keys; each is generated when not given. */
  keys?: { PIN_ENCRYPTION_KEY?: string; ORACLE_PRIVATE_KEY?: string };
  /** Environment of every node (over the parent's, under the variables set here). */
  env?: Record<string, string>;
  /** Environment of node i on top of `env`. */
  nodeEnv?: (index: number) => Record<string, string>;
  /** Node.js options before the script, e.g. `--cpu-prof --cpu-prof-dir=DIR` (bench/cluster's BENCH_NODE_ARGS). */
  nodeArgs?: readonly string[];
  /** Directory holding node-<i> data dirs; default a fresh temp dir, removed on stop. */
  dataDir?: string;
  /** How long a node may take to answer /health with 200; default 60 s (a loaded machine, bucket creation). */
  startTimeoutMs?: number;
  /** How long stop waits after SIGTERM before SIGKILL; default 15 s. */
  stopTimeoutMs?: number;
  /** Called with each line a node writes (stdout and stderr). */
  onLog?: (nodeId: string, line: string) => void;
  /** Each node in its own process group, out of reach of a terminal's Ctrl-C (see NatsClusterOptions). */
  ownProcessGroup?: boolean;
  /**
   * Where node i runs (address, command prefix such as `ip netns exec NS`); default 127.0.0.1, no prefix. The prefix
   * must exec the node (keep its pid): readiness is /health answering with the pid launched.
   */
  hosts?: readonly LocalHost[];
}

const MAIN = fileURLToPath(new URL('../app/main.js', import.meta.url));
const LOG_TAIL_CHARS = 64_000;
// Not SIGHUP: a node reloads its USSD services on it.
const TERMINATING = new Set<NodeJS.Signals>(['SIGKILL', 'SIGTERM', 'SIGINT', 'SIGQUIT', 'SIGABRT']);

interface NodeSlot {
  index: number;
  address: string;
  command: readonly string[];
  nodeId: string;
  port: number;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  nodeArgs: readonly string[];
  child?: ChildProcess;
  exited?: Promise<NodeExit>;
  log: string;
}

const isRunning = (slot: NodeSlot) =>
  slot.child !== undefined && slot.child.exitCode === null && slot.child.signalCode === null;

function launch(slot: NodeSlot, onLog: LocalNodesOptions['onLog'], detached = false): void {
  const [file, ...args] = [...parentDeathCommand(), ...slot.command, process.execPath, ...slot.nodeArgs, MAIN];
  const child = spawn(file, args, { env: slot.env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  slot.child = child;
  slot.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let partial = '';
  const take = (chunk: string) => {
    slot.log = (slot.log + chunk).slice(-LOG_TAIL_CHARS);
    if (!onLog) return;
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) onLog(slot.nodeId, line);
  };
  child.stdout!.setEncoding('utf8').on('data', take);
  child.stderr!.setEncoding('utf8').on('data', take);
}

/** Resolves once the child's stdout and stderr closed (all it wrote was read), or after 1 s. */
function outputRead(child: ChildProcess): Promise<void> {
  if (child.stdout!.closed && child.stderr!.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 1_000);
    child.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Polls /health until this very process answers 200 (its `pid`): a port held by another server (nodes left
 * running, a second set started on the first's ports) answers 200 too, while the child exits unable to listen. A
 * child that exits fails the wait at once, with its log tail. The front door's answers count against the
 * cluster-wide rate limit of 127.0.0.1 (100 a minute by default), which the caller's own requests share once the
 * node is up: after one of those, the next poll backs off (from 50 ms to 1 s). A refused connection (not listening
 * yet) and the waiting room's answer (503 saying what it is starting: src/cluster/waiting-room.ts) count against
 * nothing, and the front door listens the moment the waiting room closes: those are followed by a poll 50 ms later.
 */
async function waitForHealthy(slot: NodeSlot, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const child = slot.child!;
  // What answered 200 on the port without being this process, for the error.
  let other = '';
  for (let pause = 50; ; ) {
    const { pid, starting } = await fetch(`http://${slot.address}:${slot.port}/health`, {
      signal: AbortSignal.timeout(2_000),
    })
      .then(async (response) => {
        const body = (await response.json().catch(() => undefined)) as
          | { pid?: unknown; starting?: unknown }
          | undefined;
        return { pid: response.ok ? (body?.pid ?? 'no pid') : undefined, starting: typeof body?.starting === 'string' };
      })
      .catch((error: Error) => ({
        pid: undefined,
        starting: (error.cause as { code?: unknown } | undefined)?.code === 'ECONNREFUSED',
      }));
    if (pid === child.pid) return;
    if (pid !== undefined) {
      const by = typeof pid === 'number' ? `pid ${pid}` : String(pid);
      other = `\nport ${slot.port}: /health answered 200 by another process (${by}), not this node (pid ${child.pid})`;
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      // 'exit' can come before the last of its output has been read: wait (a bounded time) for its pipes to close.
      await outputRead(child);
      const code = child.exitCode ?? child.signalCode;
      throw new Error(`node ${slot.nodeId} exited while starting (${code}):\n${slot.log.slice(-3_000)}${other}`);
    }
    if (Date.now() > deadline)
      throw new Error(`node ${slot.nodeId} not healthy within ${timeoutMs} ms:\n${slot.log.slice(-3_000)}${other}`);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, starting ? 50 : pause))), slot.exited]);
    clearTimeout(timer);
    if (!starting) pause = Math.min(1_000, pause * 1.5);
  }
}

async function stopSlot(slot: NodeSlot, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  if (!slot.child || !isRunning(slot)) return;
  // A stopped process (SIGSTOP) does not act on SIGTERM until it runs again.
  slot.child.kill('SIGCONT');
  slot.child.kill(signal);
  const timer = setTimeout(() => slot.child?.kill('SIGKILL'), timeoutMs);
  await slot.exited;
  clearTimeout(timer);
}

export async function startLocalNodes(options: LocalNodesOptions): Promise<LocalNodes> {
  const count = options.count ?? 3;
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  if (options.ports && options.ports.length !== count)
    throw new Error(`${count} nodes need ${count} ports, got ${options.ports.length}`);
  const ports = options.ports ?? (await freePorts(count));
  const keys = {
    PIN_ENCRYPTION_KEY: options.keys?.PIN_ENCRYPTION_KEY ?? randomBytes(32).toString('hex'),
    ORACLE_PRIVATE_KEY: options.keys?.ORACLE_PRIVATE_KEY ?? formatKey(await generateKey()),
  };
  const root = options.dataDir ?? mkdtempSync(join(tmpdir(), 'sar-nodes-'));
  const ownsRoot = options.dataDir === undefined;

  const slots: NodeSlot[] = ports.map((port, index) => {
    const nodeId = `${options.nodeIdPrefix ?? 'node-'}${index + 1}`;
    const dataDir = join(root, `node-${index + 1}`);
    mkdirSync(dataDir, { recursive: true });
    const address = options.hosts?.[index]?.address ?? '127.0.0.1';
    return {
      index,
      address,
      command: options.hosts?.[index]?.command ?? [],
      nodeId,
      port,
      dataDir,
      log: '',
      nodeArgs: options.nodeArgs ?? [],
      env: {
        ...process.env,
        ...options.env,
        ...options.nodeEnv?.(index),
        ...keys,
        NATS_URL: options.natsUrl,
        ...(options.natsMonitorUrl ? { NATS_MONITOR_URL: options.natsMonitorUrl } : {}),
        NODE_ID: nodeId,
        HOST: address,
        PORT: String(port),
        DATA_DIR: dataDir,
      },
    };
  });

  // If this process ends without stop() (a failed test, an uncaught error), its nodes must not outlive it (a death
  // that runs no handler: parentDeathCommand).
  const killAll = () => {
    for (const slot of slots) if (isRunning(slot)) slot.child!.kill('SIGKILL');
  };
  process.on('exit', killAll);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(slots.map((slot) => stopSlot(slot, 'SIGTERM', stopTimeoutMs)));
    process.off('exit', killAll);
    // The promise API's rm unlinks concurrently: much faster than rmSync on a busy disk.
    if (ownsRoot) await rm(root, { recursive: true, force: true });
  };

  const nodes: LocalNode[] = slots.map((slot) => ({
    index: slot.index,
    nodeId: slot.nodeId,
    port: slot.port,
    url: `http://${slot.address}:${slot.port}`,
    dataDir: slot.dataDir,
    get pid() {
      return slot.child!.pid!;
    },
    get running() {
      return isRunning(slot);
    },
    get exited() {
      return slot.exited!;
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (!isRunning(slot)) return;
      slot.child!.kill(signal);
      if (TERMINATING.has(signal)) await slot.exited;
    },
    async restart() {
      await stopSlot(slot, 'SIGTERM', stopTimeoutMs);
      launch(slot, options.onLog, options.ownProcessGroup);
      await waitForHealthy(slot, startTimeoutMs);
    },
    log: () => slot.log,
  }));

  try {
    for (const slot of slots) launch(slot, options.onLog, options.ownProcessGroup);
    await Promise.all(slots.map((slot) => waitForHealthy(slot, startTimeoutMs)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, keys, stop };
}
