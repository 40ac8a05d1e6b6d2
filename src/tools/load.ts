// Thread: main
// `npm run load` (node dist/src/tools/load.js, built first when stale): load for any deployment. See load/options.ts
// for the flags (or --help) and docs/load.md for reading the results.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { searchCapacity } from './load/capacity.js';
import { compareReports, formatComparison } from './load/compare.js';
import { HttpClient } from './load/http.js';
import { parseOptions, USAGE, type LoadOptions } from './load/options.js';
import { Recorder, valueAtPercentile } from './load/recorder.js';
import { buildReport, writeJson, type CapacityStep, type LoadReport } from './load/report-json.js';
import { writeHtml } from './load/report-html.js';
import { runOnce, type RunSummary } from './load/run.js';
import { createScenario } from './load/scenarios/index.js';
import { DeploymentCostMeter, type DeploymentCost } from './load/deployment-cost.js';
import { MetricsScraper, type ServerMetrics } from './load/server-metrics.js';
import { sloViolations, type SloFigures } from './load/slo.js';
import { formatSummary } from './load/summary.js';

function readOldReport(path: string): LoadReport {
  try {
    const report = JSON.parse(readFileSync(path, 'utf8')) as LoadReport;
    if (report?.tool !== 'npm run load') throw new Error('not a report of npm run load --json');
    return report;
  } catch (error) {
    throw new Error(`--compare ${path}: ${(error as Error).message}`);
  }
}

function figuresOf(recorder: Recorder, summary: RunSummary): SloFigures {
  return {
    latencyAt: (p) => (recorder.latency.totalCount ? valueAtPercentile(recorder.latency, p) / 1000 : 0),
    errorRate: summary.errorRate,
    completed: summary.requests.ok + summary.requests.errors,
  };
}

interface Outcome {
  main: RunSummary;
  /** The SLO clauses the main run broke. */
  violations: string[];
  capacity?: { highestRate?: number; steps: CapacityStep[] };
}

/** Requests answered OK in the whole invocation (every step of a capacity search). */
function answeredOk(outcome: Outcome): number {
  const runs = outcome.capacity ? outcome.capacity.steps : [outcome.main];
  return runs.reduce((sum, run) => sum + run.requests.ok, 0);
}

async function runLoad(options: LoadOptions, client: HttpClient, origin: number): Promise<Outcome> {
  let recorder = new Recorder();
  const scenario = await createScenario({ options, client, recorder: () => recorder });
  if (!options.findCapacity) {
    const main = await runOnce(
      options,
      scenario,
      recorder,
      { rate: options.rate, durationMs: options.durationMs, label: '' },
      origin,
    );
    const violations = sloViolations(options.slo, figuresOf(recorder, main));
    recorder.destroy();
    return { main, violations };
  }
  const search = await searchCapacity(
    { startRate: options.rate!, factor: options.stepFactor, maxRate: options.maxRate, refine: options.refine },
    async (rate): Promise<CapacityStep> => {
      recorder = new Recorder();
      const summary = await runOnce(
        options,
        scenario,
        recorder,
        { rate, durationMs: options.stepDurationMs, label: `[${rate}/s]` },
        origin,
      );
      const violations = sloViolations(options.slo, figuresOf(recorder, summary));
      recorder.destroy();
      console.log(
        `rate ${rate}/s: ${violations.length ? `broke (${violations.join('; ')})` : 'held'}, p99 ${summary.latencyMs.p99.toFixed(1)} ms, errors ${summary.requests.errors}`,
      );
      return { ...summary, rate, held: violations.length === 0, violations };
    },
  );
  const best = search.steps.find((s) => s.held && s.rate === search.highestHeld) ?? search.steps[0];
  return {
    main: best,
    violations: best.violations,
    capacity: { highestRate: search.highestHeld, steps: search.steps },
  };
}

export async function main(argv = process.argv.slice(2)): Promise<number> {
  let options: LoadOptions | 'help';
  let old: LoadReport | undefined;
  try {
    options = parseOptions(argv);
    if (options !== 'help' && options.compare) old = readOldReport(options.compare);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    console.log(USAGE);
    return 0;
  }
  const origin = performance.now();
  const startedAt = new Date();
  const client = new HttpClient(options.target, options.timeoutMs);
  const scrapeClient = new HttpClient(options.target, 2000);
  const scraper = options.metrics
    ? new MetricsScraper(scrapeClient, options.metricsPath, options.metricsToken, origin)
    : undefined;
  const meter = options.metrics
    ? new DeploymentCostMeter(
        [options.target, ...options.metricsTargets],
        options.natsMonitors,
        options.metricsPath,
        options.metricsToken,
      )
    : undefined;
  let server: ServerMetrics = scraper
    ? await scraper.start()
    : { available: false, reason: 'not scraped (--no-metrics)', series: [] };
  await meter?.start();
  let outcome: Outcome | undefined;
  let cost: DeploymentCost | undefined;
  try {
    outcome = await runLoad(options, client, origin);
  } finally {
    cost = await meter?.stop(outcome ? answeredOk(outcome) : 0);
    if (scraper) server = await scraper.stop();
    client.close();
    scrapeClient.close();
  }
  const report = buildReport(options, startedAt, outcome.main, server, outcome.violations, outcome.capacity, cost);
  console.log(formatSummary(report));
  if (options.json) writeJson(options.json, report);
  if (options.html) writeHtml(options.html, report);
  if (old) {
    const differences = compareReports(old, report, options.maxRegression);
    console.log(formatComparison(differences, options.maxRegression));
    if (differences.some((d) => d.worse)) return 1;
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
