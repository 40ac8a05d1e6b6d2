// Thread: main
// Service level objectives for --find-capacity: "p99<300ms,errors<0.1%". A step holds when every clause holds.
import { parseDuration, parsePercent } from './units.js';

export type SloClause =
  | { kind: 'latency'; percentile: number; label: string; maxMs: number }
  | { kind: 'errors'; maxRate: number };

export interface SloFigures {
  /** Latency at a percentile (0-100), in ms. */
  latencyAt(percentile: number): number;
  errorRate: number;
  /** Requests answered; a step with none cannot hold. */
  completed: number;
}

export function parseSlo(text: string): SloClause[] {
  const clauses = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (clauses.length === 0) throw new Error('--slo needs at least one clause, e.g. p99<300ms,errors<0.1%');
  return clauses.map((clause) => {
    const latency = /^p(\d+(?:\.\d+)?)\s*<\s*(.+)$/i.exec(clause);
    if (latency) {
      const digits = latency[1];
      // p999 is the 99.9th percentile, p9999 the 99.99th: digits after the first two are decimals.
      const percentile =
        digits.length > 2 && !digits.includes('.')
          ? Number(`${digits.slice(0, 2)}.${digits.slice(2)}`)
          : Number(digits);
      if (!(percentile > 0 && percentile <= 100))
        throw new Error(`--slo: ${clause}: the percentile must be between 0 and 100`);
      return { kind: 'latency', percentile, label: `p${digits}`, maxMs: parseDuration(latency[2], `--slo ${clause}`) };
    }
    const errors = /^errors\s*<\s*(.+)$/i.exec(clause);
    if (errors) return { kind: 'errors', maxRate: parsePercent(errors[1], `--slo ${clause}`) };
    throw new Error(`--slo: "${clause}" is neither pNN<time (e.g. p99<300ms) nor errors<rate (e.g. errors<0.1%)`);
  });
}

export function formatSlo(clauses: readonly SloClause[]): string {
  return clauses
    .map((c) => (c.kind === 'latency' ? `${c.label}<${c.maxMs}ms` : `errors<${+(c.maxRate * 100).toPrecision(6)}%`))
    .join(',');
}

/** The clauses that did not hold (empty: the SLO held). */
export function sloViolations(clauses: readonly SloClause[], figures: SloFigures): string[] {
  if (figures.completed === 0) return ['no request completed'];
  const broken: string[] = [];
  for (const clause of clauses) {
    if (clause.kind === 'latency') {
      const ms = figures.latencyAt(clause.percentile);
      if (!(ms < clause.maxMs)) broken.push(`${clause.label} ${ms.toFixed(1)}ms >= ${clause.maxMs}ms`);
    } else if (!(figures.errorRate < clause.maxRate)) {
      broken.push(`errors ${(figures.errorRate * 100).toFixed(3)}% >= ${+(clause.maxRate * 100).toPrecision(6)}%`);
    }
  }
  return broken;
}
