// Thread: main
// --compare old.json: each figure of this run next to the old run's; a figure worse by more than
// --max-regression (relative) is a regression and the command exits non-zero. Throughput and capacity are worse
// when lower; latencies and the CPU per request (of every process read) when higher. The error rate is compared in absolute terms too (worse only when it rises by
// more than max(old x max-regression, 0.1 percentage point)), since from 0 errors any error is an infinite rise.
import type { LoadReport } from './report-json.js';

export interface Difference {
  figure: string;
  old: number;
  now: number;
  /** (now - old) / old; NaN when old is 0. */
  change: number;
  worse: boolean;
}

interface Figure {
  figure: string;
  better: 'higher' | 'lower' | 'error-rate';
  value(report: LoadReport): number | undefined | null;
}

const ERROR_RATE_FLOOR = 0.001;

function figures(old: LoadReport, now: LoadReport): Figure[] {
  const list: Figure[] = [
    { figure: 'throughput req/s', better: 'higher', value: (r) => r.throughput?.rps },
    ...(['p50', 'p90', 'p99', 'p999'] as const).map(
      (p): Figure => ({ figure: `latency ${p} ms`, better: 'lower', value: (r) => r.latencyMs?.[p] }),
    ),
    { figure: 'error rate', better: 'error-rate', value: (r) => r.errorRate },
    { figure: 'capacity req/s', better: 'higher', value: (r) => r.capacity?.highestRate },
    { figure: 'CPU ms per request', better: 'lower', value: (r) => r.cost?.cpuMsPerRequest },
  ];
  for (const name of Object.keys(now.timings ?? {})) {
    if (old.timings?.[name])
      list.push({ figure: `${name} p99 ms`, better: 'lower', value: (r) => r.timings?.[name]?.p99 });
  }
  return list;
}

function isWorse(better: Figure['better'], old: number, now: number, maxRegression: number): boolean {
  if (better === 'higher') return now < old * (1 - maxRegression);
  if (better === 'lower') return now > old * (1 + maxRegression);
  return now - old > Math.max(old * maxRegression, ERROR_RATE_FLOOR);
}

export function compareReports(old: LoadReport, now: LoadReport, maxRegression: number): Difference[] {
  const differences: Difference[] = [];
  for (const { figure, better, value } of figures(old, now)) {
    const before = value(old);
    const after = value(now);
    if (typeof before !== 'number' || typeof after !== 'number') continue;
    differences.push({
      figure,
      old: before,
      now: after,
      change: before === 0 ? NaN : (after - before) / before,
      worse: isWorse(better, before, after, maxRegression),
    });
  }
  return differences;
}

export function formatComparison(differences: Difference[], maxRegression: number): string {
  const lines = [
    `\n## Compared with the old run (a regression is worse by more than ${+(maxRegression * 100).toFixed(2)}%)`,
    '| figure | old | new | change | |',
    '|---|---|---|---|---|',
  ];
  for (const d of differences) {
    const change = Number.isNaN(d.change)
      ? d.now === d.old
        ? '0%'
        : 'new'
      : `${d.change >= 0 ? '+' : ''}${(d.change * 100).toFixed(1)}%`;
    lines.push(
      `| ${d.figure} | ${+d.old.toFixed(4)} | ${+d.now.toFixed(4)} | ${change} | ${d.worse ? 'REGRESSION' : 'ok'} |`,
    );
  }
  const worse = differences.filter((d) => d.worse);
  lines.push(
    '',
    worse.length ? `${worse.length} regression(s): ${worse.map((d) => d.figure).join(', ')}` : 'no regression',
  );
  return lines.join('\n');
}
