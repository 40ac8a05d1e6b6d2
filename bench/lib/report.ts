// The one shape every benchmark row takes, the table printed per benchmark and the BENCH_JSON file.
// A row is compared only with the baseline row named in `baseline`, measured in the same run by the same
// client code path; ratios are row / baseline (so CPU 3.0 means three times the baseline's CPU per unit).
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { printMarkdownTable } from './table.js';

export interface Row {
  /** The benchmark the row belongs to (`ussd`, `auth`, ...). */
  bench: string;
  name: string;
  /** The name of the baseline row this one is compared with; absent on baselines and on rows without one. */
  baseline?: string;
  /** What one operation is: `request`, `stream`, `socket`, `session`. */
  unit: string;
  /** Operations completed. */
  count: number;
  /** Operations per second. */
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU (user + system, all threads, from /proc) per operation, in milliseconds. */
  cpuMsPerOp: number;
  /** Server resident memory at the end of the row. */
  rssBytes: number;
  /** Failed operations: transport errors, timeouts, non-2xx, wrong answers. */
  errors: number;
  /** row / baseline; null when the row has no baseline or a figure is missing. */
  ratio: {
    throughput: number | null;
    p50: number | null;
    p99: number | null;
    cpu: number | null;
    rssPerOp: number | null;
  } | null;
  /** Row-specific figures (e.g. memory per socket), all numbers so runs can be compared. */
  extra: Record<string, number>;
  /** When the measured part ran, in CLOCK_MONOTONIC microseconds (the clock of --cpu-prof's timestamps). */
  window?: { startUs: number; endUs: number };
}

export type Measured = Omit<Row, 'bench' | 'name' | 'baseline' | 'ratio' | 'extra'> & {
  extra?: Record<string, number>;
};

/** Now on the monotonic clock, in microseconds. */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

const quotient = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : null);

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Several runs of one row as one measurement: operations, CPU and time summed (so throughput and CPU per operation
 * are over all the runs), latency percentiles the median of the runs' (their histograms are not kept), errors
 * summed, RSS the last run's; no window (the runs are not one span of time).
 */
export function overRuns(runs: readonly Measured[]): Measured {
  if (runs.length === 1) return runs[0];
  const count = runs.reduce((n, r) => n + r.count, 0);
  const seconds = runs.reduce((s, r) => s + r.count / r.throughput, 0);
  const perOp = (figure: (r: Measured) => number | undefined) =>
    runs.reduce((sum, r) => sum + (figure(r) ?? NaN) * r.count, 0) / count;
  const extraKeys = Object.keys(runs[0].extra ?? {});
  return {
    ...runs[runs.length - 1],
    count,
    throughput: count / seconds,
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    cpuMsPerOp: perOp((r) => r.cpuMsPerOp),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    window: undefined,
    // Per-operation figures (…PerOp), weighted by each run's operations like the CPU above.
    extra: Object.fromEntries(extraKeys.map((key) => [key, perOp((r) => r.extra?.[key])])),
  };
}

/** Names a measurement and, when a baseline is given, fills the ratios against it. */
export function row(bench: string, name: string, measured: Measured, baseline?: Row): Row {
  const { extra = {}, ...figures } = measured;
  const rssPerOp = (r: { extra: Record<string, number> }) => r.extra.rssPerOpBytes ?? NaN;
  const result: Row = { bench, name, ...figures, extra, ratio: null };
  if (baseline) {
    result.baseline = baseline.name;
    result.ratio = {
      throughput: quotient(result.throughput, baseline.throughput),
      p50: quotient(result.p50Ms, baseline.p50Ms),
      p99: quotient(result.p99Ms, baseline.p99Ms),
      cpu: quotient(result.cpuMsPerOp, baseline.cpuMsPerOp),
      rssPerOp: quotient(rssPerOp(result), rssPerOp(baseline)),
    };
  }
  return result;
}

/** `n` with `digits` decimals, or `-` when there is no figure. */
export const fixed = (n: number | null | undefined, digits: number) =>
  n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
const times = (n: number | null | undefined) => (n === null || n === undefined ? '-' : `${n.toFixed(2)}x`);

export function printRows(title: string, rows: readonly Row[]): void {
  const columns = [
    'run',
    'unit',
    'count',
    '/s',
    'p50 ms',
    'p99 ms',
    'server CPU ms/op',
    'RSS MiB',
    'errors',
    '/s vs base',
    'p50 vs base',
    'CPU vs base',
    'RSS/op vs base',
    'other',
  ];
  printMarkdownTable(
    title,
    columns,
    rows.map((r) => [
      r.baseline
        ? r.name
        : `${r.name}${r.ratio === null && rows.some((o) => o.baseline === r.name) ? ' (baseline)' : ''}`,
      r.unit,
      r.count,
      fixed(r.throughput, 0),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      fixed(r.cpuMsPerOp, 4),
      fixed(r.rssBytes / 2 ** 20, 0),
      r.errors,
      times(r.ratio?.throughput),
      times(r.ratio?.p50),
      times(r.ratio?.cpu),
      times(r.ratio?.rssPerOp),
      Object.entries(r.extra)
        .map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toPrecision(3)}`)
        .join(' ') || '-',
    ]),
  );
}

export interface RunMeta {
  date: string;
  commit: string;
  node: string;
  cpus: number;
  cpuModel: string;
  /** 1, 5 and 15 minute load averages when the run started: a loaded machine skews every figure. */
  loadAverage: number[];
  options: Record<string, unknown>;
}

export function runMeta(options: Record<string, unknown>): RunMeta {
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    // Not a git checkout: the commit stays unknown.
  }
  return {
    date: new Date().toISOString(),
    commit,
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverage: loadavg().map((n) => +n.toFixed(2)),
    options,
  };
}

export function writeJson(path: string, meta: RunMeta, rows: readonly Row[]): void {
  writeFileSync(path, `${JSON.stringify({ tool: 'npm run bench', ...meta, rows }, null, 2)}\n`);
}
