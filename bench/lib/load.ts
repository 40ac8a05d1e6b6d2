// One autocannon run against a server process: throughput, latency and the server's own CPU and memory.
import autocannon from 'autocannon';
import { cpuPerOpByPart, cpuSnapshot, portFor, type LoadTarget } from './process.js';
import { monotonicUs, type Measured } from './report.js';

export type LoadOptions = Omit<autocannon.Options, 'url'> & { path?: string };

/**
 * Runs autocannon with `options` against `target`; CPU is the target's (all threads) over the run. A timed run
 * is preceded by an unmeasured warm-up of the same client (a third of it, at most a second), so neither side of
 * a comparison is measured while its JIT is cold; a run of a fixed `amount` (fresh invocations) has none.
 */
export async function measure(target: LoadTarget, options: LoadOptions): Promise<Measured> {
  const { path = '/', ...rest } = options;
  // Several ports: autocannon gives connection i the URL i % n.
  const urls = (target.ports ?? [target.port]).map((_, i) => `http://127.0.0.1:${portFor(target, i)}${path}`);
  const url = (urls.length === 1 ? urls[0] : urls) as string;
  if (rest.duration && !rest.amount) {
    const warmUp = Math.min(1, Number(rest.duration) / 3);
    await autocannon({ url, ...rest, duration: warmUp, sampleInt: sampleIntFor(warmUp) });
  }
  const cpuBefore = cpuSnapshot(target);
  const mainBefore = target.mainThreadCpuSeconds();
  const threadsBefore = target.threadCpuSeconds();
  const startUs = monotonicUs();
  const { result, lastResponseUs } = await run({
    url,
    ...rest,
    ...(rest.duration && !rest.amount ? { sampleInt: sampleIntFor(Number(rest.duration)) } : {}),
  });
  // A run of a fixed amount ends at its last response: autocannon only notices it is done on its next one-second
  // sample, so its own duration rounds the run up to whole seconds (10,000 requests in 3.1 s read as 2,500/s).
  const window = { startUs, endUs: rest.amount ? lastResponseUs : monotonicUs() };
  const cpuAfter = cpuSnapshot(target);
  const cpuSeconds = cpuAfter.seconds - cpuBefore.seconds;
  const mainSeconds = target.mainThreadCpuSeconds() - mainBefore;
  const busiest = busiestOtherThreads(target, threadsBefore, target.threadCpuSeconds());
  const count = result.requests.total;
  return {
    unit: 'request',
    count,
    throughput: rest.amount ? count / ((window.endUs - window.startUs) / 1e6 || 1) : count / (result.duration || 1),
    // With nothing completed autocannon reports 0 ms: no figure is more honest.
    p50Ms: count ? result.latency.p50 : NaN,
    p99Ms: count ? result.latency.p99 : NaN,
    cpuMsPerOp: count ? (cpuSeconds * 1000) / count : NaN,
    rssBytes: target.rssBytes(),
    errors: result.errors + result.timeouts + result.non2xx,
    window,
    extra: {
      mainThreadCpuMsPerOp: count ? (mainSeconds * 1000) / count : NaN,
      ...cpuPerOpByPart(cpuBefore, cpuAfter, count),
      // Where the rest goes: an actor host's worker thread shows as the busiest other thread.
      ...Object.fromEntries(
        busiest.map((seconds, i) => [`thread${i + 2}CpuMsPerOp`, count ? (seconds * 1000) / count : NaN]),
      ),
    },
  };
}

/**
 * autocannon ends a timed run at its first sample tick after the duration (every 1000 ms by default): a 0.5 s run
 * lasted 1 s, a 1.5 s run 2 s. Runs of whole seconds keep that tick; any other is sampled every 100 ms, so it ends
 * within 100 ms of its duration.
 */
export const sampleIntFor = (seconds: number): number => (Number.isInteger(seconds) ? 1000 : 100);

/** One autocannon run, and when its last response came (monotonicUs). */
function run(options: autocannon.Options): Promise<{ result: autocannon.Result; lastResponseUs: number }> {
  return new Promise((resolve, reject) => {
    let lastResponseUs = 0;
    const instance = autocannon(options, (error: unknown, result: autocannon.Result) =>
      error ? reject(error) : resolve({ result, lastResponseUs }),
    );
    if (options.amount) instance.on('response', () => void (lastResponseUs = monotonicUs()));
  });
}

/** CPU seconds over the run of the two busiest threads other than the main one, busiest first. */
function busiestOtherThreads(target: LoadTarget, before: Map<number, number>, after: Map<number, number>): number[] {
  const used = [...after]
    .filter(([tid]) => tid !== target.pid)
    .map(([tid, seconds]) => seconds - (before.get(tid) ?? 0));
  return used.sort((a, b) => b - a).slice(0, 2);
}

/** Millisecond percentile of an ascending list. */
export const percentile = (sorted: readonly number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;
