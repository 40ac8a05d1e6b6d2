// Thread: main
// Everything a run measures: request outcomes, latency in HDR histograms (microseconds, 3 significant digits),
// one series entry per second, errors by kind, per-scenario counts and extra timings (chat first frame, ...).
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  count: number;
}

export interface SeriesPoint {
  /** Seconds since the start of the run, at the end of the interval. */
  t: number;
  /** Requests answered (ok or not) per second in this interval (one second; the last one may be shorter). */
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Requests in flight at the end of the second. */
  inFlight: number;
}

const newHistogram = () =>
  hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: 3 });
const ms = (micros: number) => Math.round(micros) / 1000;

/**
 * The latency (microseconds) at a percentile, never above the largest recorded: the histogram answers the top of
 * the value's bucket (up to 0.1% above what was recorded), which would put a p99.9 above the max.
 */
export function valueAtPercentile(histogram: hdr.Histogram, percentile: number): number {
  return Math.min(histogram.getValueAtPercentile(percentile), histogram.maxValue);
}

export function summarize(histogram: hdr.Histogram): LatencySummary {
  const at = (p: number) => (histogram.totalCount ? ms(valueAtPercentile(histogram, p)) : 0);
  return {
    p50: at(50),
    p90: at(90),
    p99: at(99),
    p999: at(99.9),
    max: histogram.totalCount ? ms(histogram.maxValue) : 0,
    mean: histogram.totalCount ? ms(histogram.mean) : 0,
    count: histogram.totalCount,
  };
}

/** Latency (ms) at percentiles spread to the tail, for the distribution chart. */
export function distribution(histogram: hdr.Histogram): { percentile: number; ms: number }[] {
  if (!histogram.totalCount) return [];
  const points: { percentile: number; ms: number }[] = [];
  // Evenly spaced in -log10(1 - p): as many points between 90 and 99 as between 0 and 90.
  for (let x = 0; x <= 5.0001; x += 0.05) {
    const percentile = Math.min(100, (1 - 10 ** -x) * 100);
    points.push({ percentile: +percentile.toFixed(5), ms: ms(valueAtPercentile(histogram, percentile)) });
  }
  points.push({ percentile: 100, ms: ms(histogram.maxValue) });
  return points;
}

export class Recorder {
  readonly latency = newHistogram();
  readonly series: SeriesPoint[] = [];
  readonly errorsByKind: Record<string, number> = {};
  readonly counts: Record<string, number> = {};
  readonly timings = new Map<string, hdr.Histogram>();
  sent = 0;
  ok = 0;
  errors = 0;
  inFlight = 0;
  readonly startedAt = performance.now();
  private second = newHistogram();
  private secondAnswered = 0;
  private secondErrors = 0;

  /** A request leaves; pair with `answered` or `failed`. */
  sending(): void {
    this.sent++;
    this.inFlight++;
  }

  /** A request succeeded; its latency counts from `since` (its scheduled start in open loop). */
  answered(since: number): void {
    this.inFlight--;
    this.ok++;
    this.secondAnswered++;
    this.recordLatency(performance.now() - since);
  }

  /** A request failed: counted under `kind` ("timeout", "http 503", ...); its latency counts too. */
  failed(since: number, kind: string): void {
    this.inFlight--;
    this.errors++;
    this.secondAnswered++;
    this.secondErrors++;
    this.error(kind);
    this.recordLatency(performance.now() - since);
  }

  /** A request without a latency to record (never sent: dropped; or failed in autocannon): an error. */
  unanswered(kind: string): void {
    this.sent++;
    this.errors++;
    this.secondErrors++;
    this.error(kind);
  }

  /** An error that is not a request (e.g. an arrival dropped because too many were in flight). */
  error(kind: string): void {
    this.errorsByKind[kind] = (this.errorsByKind[kind] ?? 0) + 1;
  }

  count(name: string, n = 1): void {
    this.counts[name] = (this.counts[name] ?? 0) + n;
  }

  timing(name: string, ms: number): void {
    let histogram = this.timings.get(name);
    if (!histogram) this.timings.set(name, (histogram = newHistogram()));
    histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  }

  /** Closes the current second (called once a second by the run; the last one may be `seconds` long). */
  tick(seconds = 1): SeriesPoint {
    const summary = summarize(this.second);
    const point = {
      t: Math.round(((this.series.at(-1)?.t ?? 0) + seconds) * 1000) / 1000,
      rps: Math.round(this.secondAnswered / seconds),
      p50: summary.p50,
      p99: summary.p99,
      errors: this.secondErrors,
      inFlight: this.inFlight,
    };
    this.series.push(point);
    this.second.reset();
    this.secondAnswered = 0;
    this.secondErrors = 0;
    return point;
  }

  elapsedSeconds(): number {
    return (performance.now() - this.startedAt) / 1000;
  }

  destroy(): void {
    this.latency.destroy();
    this.second.destroy();
    for (const histogram of this.timings.values()) histogram.destroy();
  }

  private recordLatency(elapsedMs: number): void {
    const micros = Math.max(1, Math.round(elapsedMs * 1000));
    this.latency.recordValue(micros);
    this.second.recordValue(micros);
  }
}
