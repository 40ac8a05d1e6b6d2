// Thread: main
// The --json report: every figure of the run. With --find-capacity the top-level figures are those of the
// highest rate that held (or of the first step when none held) and `capacity.steps` has every step tried.
import { writeFileSync } from 'node:fs';
import { hintsFor } from './hints.js';
import type { LoadOptions } from './options.js';
import type { RunSummary } from './run.js';
import type { DeploymentCost } from './deployment-cost.js';
import type { ServerMetrics } from './server-metrics.js';

export interface CapacityStep extends RunSummary {
  rate: number;
  held: boolean;
  /** The SLO clauses that broke. */
  violations: string[];
}

export interface LoadReport extends RunSummary {
  tool: 'npm run load';
  version: 1;
  startedAt: string;
  target: string;
  scenario: string;
  mix?: LoadOptions['mix'];
  capacity?: { slo: string; highestRate: number | null; steps: Omit<CapacityStep, 'distribution'>[] };
  /** The run's figures against --slo: the clauses that broke (empty: it held). */
  slo: { objective: string; violations: string[] };
  /** What the figures say beyond the numbers (a rate limit that refused the load). */
  hints: string[];
  server: ServerMetrics;
  /** CPU and NATS messages per request of every process read (absent with --no-metrics). */
  cost?: DeploymentCost;
}

export function buildReport(
  options: LoadOptions,
  startedAt: Date,
  main: RunSummary,
  server: ServerMetrics,
  sloViolations: string[],
  capacity?: { highestRate?: number; steps: CapacityStep[] },
  cost?: DeploymentCost,
): LoadReport {
  return {
    tool: 'npm run load',
    version: 1,
    startedAt: startedAt.toISOString(),
    target: options.target.origin,
    scenario: options.scenario,
    mix: options.scenario === 'mix' ? options.mix : undefined,
    ...main,
    capacity: capacity && {
      slo: options.sloText,
      highestRate: capacity.highestRate ?? null,
      steps: capacity.steps.map(({ distribution: _omit, ...step }) => step),
    },
    slo: { objective: options.sloText, violations: sloViolations },
    hints: hintsFor(main),
    server,
    cost,
  };
}

export function writeJson(path: string, report: LoadReport): void {
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
