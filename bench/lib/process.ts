// Child processes for benchmarks: the real server (compiled) and baselines, with CPU time read from /proc.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { collectGarbage, inspectorUrlIn } from './inspector-gc.js';

/** The repository root (this file runs from dist/bench/lib/). */
export const ROOT = new URL('../../../', import.meta.url).pathname;
const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** What a load run drives and reads: one server process, or several behind one name (bench/cluster.ts). */
export interface LoadTarget {
  readonly pid: number;
  readonly port: number;
  /** When set, the load is spread over these ports (connection or caller i goes to ports[i % length]). */
  readonly ports?: readonly number[];
  /** User + system CPU seconds of the whole process (all its threads) so far; of all its processes for several. */
  cpuSeconds(): number;
  /** The same for its main thread alone. */
  mainThreadCpuSeconds(): number;
  /** CPU seconds of each of its live threads, by thread id. */
  threadCpuSeconds(): Map<number, number>;
  /** Resident memory in bytes. */
  rssBytes(): number;
  /** For several processes: CPU seconds so far of each group (e.g. `nodes`, `nats`), reported per operation apart. */
  cpuSecondsByPart?(): Record<string, number>;
}

/** The port caller or connection `index` sends to. */
export const portFor = (target: Pick<LoadTarget, 'port' | 'ports'>, index: number) =>
  target.ports?.length ? target.ports[index % target.ports.length] : target.port;

/**
 * CPU seconds so far of the whole target and, for several processes, of each part, read at one moment: the whole
 * is then the sum of its parts, never a figure read a few milliseconds apart from them.
 */
export function cpuSnapshot(target: LoadTarget): { seconds: number; parts?: Record<string, number> } {
  const parts = target.cpuSecondsByPart?.();
  return parts ? { seconds: Object.values(parts).reduce((a, b) => a + b, 0), parts } : { seconds: target.cpuSeconds() };
}

/** `<part>CpuMsPerOp` for each part of a target of several processes, between two snapshots of a run that completed `count` operations. */
export function cpuPerOpByPart(
  before: ReturnType<typeof cpuSnapshot>,
  after: ReturnType<typeof cpuSnapshot>,
  count: number,
): Record<string, number> {
  if (!before.parts || !after.parts) return {};
  return Object.fromEntries(
    Object.keys(after.parts).map((part) => [
      `${part}CpuMsPerOp`,
      count ? ((after.parts![part] - (before.parts![part] ?? 0)) * 1000) / count : NaN,
    ]),
  );
}

export interface BenchProcess extends LoadTarget {
  readonly child: ChildProcess;
  /** Resident memory split by kind (anonymous: heaps and native allocations; file: mapped files, LMDB's map among them). */
  memory(): MemorySample;
  /** The most files (sockets included) the process may open. */
  openFilesLimit(): number;
  /** A full GC on the main thread (only for a process started with `inspect`). */
  collectGarbage(): Promise<void>;
  stop(): Promise<void>;
  /** The server's DATA_DIR (startServerProcess only). */
  readonly dataDir?: string;
}

/**
 * User + system CPU seconds from /proc. /proc/<pid>/stat of a process sums utime and stime over all its threads
 * (worker threads, libuv's pool, LMDB's, finished ones included); /proc/<pid>/task/<pid>/stat is the main
 * thread alone, which bounds a single-threaded front door's throughput.
 */
export function cpuSecondsOf(pid: number, mainThreadOnly = false): number {
  return cpuSecondsIn(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`);
}

function cpuSecondsIn(statFile: string): number {
  // Fields after the command name (which may hold spaces): utime is field 14, stime field 15.
  const stat = readFileSync(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** CPU seconds per live thread of `pid` (a thread that ends between the listing and the read is left out). */
export function threadCpuSecondsOf(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(Number(tid), cpuSecondsIn(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // ended meanwhile
    }
  }
  return threads;
}

export interface MemorySample {
  rssBytes: number;
  /** RssAnon: the JS heaps of every thread, native allocations (uWS's sockets, LMDB's write buffers). */
  anonBytes: number;
  /** RssFile + RssShmem: resident pages of mapped files (the node binary, LMDB's memory-mapped database). */
  fileBytes: number;
}

export function memoryOf(pid: number): MemorySample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rssBytes: kB('VmRSS'), anonBytes: kB('RssAnon'), fileBytes: kB('RssFile') + kB('RssShmem') };
}

export const rssBytesOf = (pid: number): number => memoryOf(pid).rssBytes;

export function openFilesLimitOf(pid: number): number {
  const limits = readFileSync(`/proc/${pid}/limits`, 'utf8');
  return Number(/Max open files\s+(\d+)/.exec(limits)?.[1] ?? Infinity);
}

export interface StartOptions {
  /** Opens the inspector on a free loopback port, so the bench can force GCs (collectGarbage). */
  inspect?: boolean;
}

/** Starts `node <script>` and waits until it prints `LISTENING <port>` or logs `"msg":"listening"` with a port. */
export async function startNode(
  script: string,
  env: Record<string, string> = {},
  args: string[] = [],
  options: StartOptions = {},
): Promise<BenchProcess> {
  // BENCH_NODE_ARGS passes flags to the server under test, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = script.startsWith('dist/src/') ? (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
  if (options.inspect) nodeArgs.push('--inspect=127.0.0.1:0');
  // `ulimit -n` is per process: the server's soft limit on open files is raised to the hard one, so it can hold
  // as many sockets as the machine allows (the idle-socket row holds tens of thousands). `exec` keeps the pid.
  const command = [process.execPath, ...nodeArgs, isAbsolute(script) ? script : join(ROOT, script), ...args];
  const child = spawn('sh', ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"', 'sh', ...command], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', options.inspect ? 'pipe' : 'inherit'],
  });
  // With the inspector, stderr is read for its address and passed on.
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    if (stderr.length < 4096) stderr += chunk.toString();
  });
  // A benchmark that fails must not leave servers running.
  const killChild = () => child.kill('SIGKILL');
  process.once('exit', killChild);
  child.once('exit', () => process.off('exit', killChild));
  const port = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${script} did not start in time`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /LISTENING (\d+)/.exec(buffer) ?? /"port":(\d+)[^\n]*"msg":"listening"/.exec(buffer);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
  return {
    pid: child.pid!,
    port,
    child,
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    mainThreadCpuSeconds: () => cpuSecondsOf(child.pid!, true),
    threadCpuSeconds: () => threadCpuSecondsOf(child.pid!),
    rssBytes: () => rssBytesOf(child.pid!),
    memory: () => memoryOf(child.pid!),
    openFilesLimit: () => openFilesLimitOf(child.pid!),
    async collectGarbage() {
      const url = inspectorUrlIn(stderr);
      if (!url) throw new Error(`${script} was not started with its inspector`);
      await collectGarbage(url);
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Starts the real server on a free port with a throw-away DATA_DIR; loopback is exempt from the rate limit. */
export async function startServerProcess(
  env: Record<string, string> = {},
  options: StartOptions = {},
  /** The root of another built checkout to run instead of this one (a baseline build). */
  root?: string,
): Promise<BenchProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-bench-'));
  const server = await startNode(
    root ? join(root, 'dist/src/app/main.js') : 'dist/src/app/main.js',
    {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      RATE_LIMIT_ALLOWLIST: '127.0.0.0/8,::1',
      ...env,
      // The start-up line that carries the port is logged at info; request logs are at debug.
      LOG_LEVEL: 'info',
    },
    [],
    options,
  );
  return {
    ...server,
    dataDir,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `use` on a started process and stops the process whatever happens. */
export async function withProcess<T>(
  start: Promise<BenchProcess>,
  use: (target: BenchProcess) => Promise<T>,
): Promise<T> {
  const target = await start;
  try {
    return await use(target);
  } finally {
    await target.stop();
  }
}
