// The cost of metrics on the hot paths: two copies of the server, METRICS_ENABLED=false and =true, both running
// throughout; short runs alternate between them (off-on, then on-off) so that drift on a shared machine hits both
// alike, and each case reports the median of the paired ratios. /metrics of the "on" server is scraped every
// SCRAPE_SECONDS (5: three times as often as Prometheus's usual 15 s). Cases: realistic USSD sessions (every
// step committed to disk) and the landing route GET / (no work of its own: the per-request overhead weighs most).
// `npm run bench -- --only metrics [--seconds N --connections N]`; BENCH_ROUNDS (4) sets the rounds.
import { pathToFileURL } from 'node:url';
import { observeRequest } from '../src/metrics/http.js';
import { printMarkdownTable } from './lib/table.js';
import { measure, type LoadOptions } from './lib/load.js';
import { parseBenchOptions, type BenchOptions } from './lib/options.js';
import { startServerProcess, type BenchProcess } from './lib/process.js';
import { median, row, type Measured, type Row } from './lib/report.js';
import { ussdSessions } from './ussd.js';

const SCRAPE_SECONDS = 5;

interface Case {
  name: string;
  options: () => LoadOptions;
}

const percent = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

/** The median pair as report rows: metrics off as the baseline of metrics on. */
function medianRows(name: string, pairs: { off: Measured; on: Measured }[]): Row[] {
  const mid = (side: 'off' | 'on'): Measured => {
    const runs = pairs.map((p) => p[side]);
    return {
      ...runs[0],
      count: runs.reduce((n, r) => n + r.count, 0),
      throughput: median(runs.map((r) => r.throughput)),
      p50Ms: median(runs.map((r) => r.p50Ms)),
      p99Ms: median(runs.map((r) => r.p99Ms)),
      cpuMsPerOp: median(runs.map((r) => r.cpuMsPerOp)),
      errors: runs.reduce((n, r) => n + r.errors, 0),
      window: undefined,
    };
  };
  const off = row('metrics', `${name}, metrics off`, mid('off'));
  return [off, row('metrics', `${name}, metrics on`, mid('on'), off)];
}

export async function benchMetrics(bench: BenchOptions): Promise<Row[]> {
  const { seconds: duration, connections } = bench;
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const cases: Case[] = [
    {
      name: 'USSD sessions',
      options: () => ({ duration, connections, requests: ussdSessions('metrics', bench.ussdIds).requests }),
    },
    { name: 'GET / (bare route)', options: () => ({ duration, connections, path: '/' }) },
  ];
  const off = await startServerProcess({ METRICS_ENABLED: 'false' });
  const on = await startServerProcess({ METRICS_ENABLED: 'true' });
  const scrapeMs: number[] = [];
  const scraper = setInterval(() => {
    const started = performance.now();
    void fetch(`http://127.0.0.1:${on.port}/metrics`)
      .then((res) => res.text())
      .then(() => scrapeMs.push(performance.now() - started));
  }, SCRAPE_SECONDS * 1000);

  const rows = [];
  const reportRows: Row[] = [];
  try {
    for (const { name, options } of cases) {
      const pairs: { off: Measured; on: Measured }[] = [];
      for (let round = 0; round < rounds; round++) {
        const order: [string, BenchProcess][] =
          round % 2
            ? [
                ['on', on],
                ['off', off],
              ]
            : [
                ['off', off],
                ['on', on],
              ];
        const pair: Partial<Record<string, Measured>> = {};
        for (const [label, server] of order) pair[label] = await measure(server, options());
        pairs.push(pair as { off: Measured; on: Measured });
      }
      rows.push([
        name,
        pairs.map((p) => p.off.throughput.toFixed(0)).join(' / '),
        pairs.map((p) => p.on.throughput.toFixed(0)).join(' / '),
        percent(median(pairs.map((p) => p.on.throughput / p.off.throughput))),
        median(pairs.map((p) => p.off.cpuMsPerOp)).toFixed(4),
        median(pairs.map((p) => p.on.cpuMsPerOp)).toFixed(4),
        percent(median(pairs.map((p) => p.on.cpuMsPerOp / p.off.cpuMsPerOp))),
      ]);
      reportRows.push(...medianRows(name, pairs));
    }
  } finally {
    clearInterval(scraper);
    await Promise.all([off.stop(), on.stop()]);
  }
  printMarkdownTable(
    `Metrics off vs on: ${connections} connections, ${rounds} rounds of ${duration} s runs per case, alternating; /metrics scraped every ${SCRAPE_SECONDS} s`,
    [
      'case',
      'req/s off (each round)',
      'req/s on (each round)',
      'req/s on vs off (median of pairs)',
      'CPU ms/req off',
      'CPU ms/req on',
      'CPU/req on vs off (median of pairs)',
    ],
    rows,
  );
  console.log(`/metrics: ${scrapeMs.length} scrapes, median ${median(scrapeMs).toFixed(1)} ms each (under load)`);
  console.log(
    `front-door hook (two clock reads, the route's series, a histogram observation): ${hookNanoseconds().toFixed(0)} ns per request`,
  );
  return reportRows;
}

/** What the front door adds to a request with metrics on, timed in this process (steadier than the load runs). */
function hookNanoseconds(): number {
  const route = { pattern: '/api/ussd' };
  const calls = 2_000_000;
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    observeRequest(route, 'POST', 200, (performance.now() - t0) / 1000);
  }
  return ((performance.now() - started) * 1e6) / calls;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const options = parseBenchOptions(process.argv.slice(2));
  if (options !== 'help') await benchMetrics(options);
}
