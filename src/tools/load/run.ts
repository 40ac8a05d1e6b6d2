// Thread: main
// One run (or one capacity step): the open or the closed loop over a scenario, ticking the recorder every second,
// summarised into plain figures once the last journey has finished.
import { runClosedLoop } from './closed-loop.js';
import { runOpenLoop } from './open-loop.js';
import type { LoadOptions } from './options.js';
import { progressLine } from './progress.js';
import { distribution, type Recorder, summarize, type LatencySummary, type SeriesPoint } from './recorder.js';
import type { Scenario } from './scenarios/types.js';

export interface RunSummary {
  mode: 'open' | 'closed';
  /** Open loop: journeys started per second. */
  rate?: number;
  connections?: number;
  /** Closed loop: autocannon or journey loops. */
  driver?: 'autocannon' | 'journeys';
  /** Seconds from the origin of the whole invocation to this run's start (series `t` adds to it). */
  startOffsetS: number;
  durationS: number;
  requests: { sent: number; ok: number; errors: number };
  errorRate: number;
  throughput: { rps: number };
  latencyMs: LatencySummary;
  series: SeriesPoint[];
  errorsByKind: Record<string, number>;
  counts: Record<string, number>;
  timings: Record<string, LatencySummary>;
  distribution: { percentile: number; ms: number }[];
}

export interface RunPlan {
  rate?: number;
  durationMs: number;
  /** Printed before each progress line ("rate 50/s" during a capacity search). */
  label: string;
}

export async function runOnce(
  options: LoadOptions,
  scenario: Scenario,
  recorder: Recorder,
  plan: RunPlan,
  origin: number,
): Promise<RunSummary> {
  const ticker = setInterval(() => {
    const point = recorder.tick();
    if (options.progress) console.log(progressLine(point, plan.label));
  }, 1000);
  let driver: RunSummary['driver'];
  try {
    if (plan.rate !== undefined)
      await runOpenLoop(scenario, recorder, {
        rate: plan.rate,
        durationMs: plan.durationMs,
        maxInFlight: options.maxInFlight,
      });
    else
      driver = await runClosedLoop(scenario, recorder, {
        target: options.target,
        connections: options.connections,
        durationMs: plan.durationMs,
        timeoutMs: options.timeoutMs,
      });
  } finally {
    clearInterval(ticker);
  }
  const durationS = recorder.elapsedSeconds();
  // The last, partial second, so that the series adds up to the totals.
  const rest = durationS - (recorder.series.at(-1)?.t ?? 0);
  if (rest > 0.05) {
    const point = recorder.tick(rest);
    if (options.progress) console.log(progressLine(point, plan.label));
  }
  const answered = recorder.ok + recorder.errors;
  return {
    mode: plan.rate !== undefined ? 'open' : 'closed',
    rate: plan.rate,
    connections: plan.rate === undefined ? options.connections : undefined,
    driver,
    startOffsetS: Math.round(recorder.startedAt - origin) / 1000,
    durationS: Math.round(durationS * 1000) / 1000,
    requests: { sent: recorder.sent, ok: recorder.ok, errors: recorder.errors },
    errorRate: recorder.sent ? recorder.errors / recorder.sent : 0,
    throughput: { rps: Math.round((answered / durationS) * 100) / 100 },
    latencyMs: summarize(recorder.latency),
    series: recorder.series,
    errorsByKind: recorder.errorsByKind,
    counts: recorder.counts,
    timings: Object.fromEntries([...recorder.timings].map(([name, histogram]) => [name, summarize(histogram)])),
    distribution: distribution(recorder.latency),
  };
}
