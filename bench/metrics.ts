// The cost of metrics on the hot paths: two copies of the server, METRICS_ENABLED=false and =true, both running
// throughout; short runs alternate between them (off-on, then on-off) so that drift on a shared machine hits both
// alike, and each case reports the median of the paired ratios. /metrics of the "on" server is scraped every
// SCRAPE_SECONDS (5: three times as often as Prometheus's usual 15 s). Cases: realistic USSD sessions (every
// step committed to disk) and the landing route GET / (no work of its own: the per-request overhead weighs most).
import { observeRequest } from '../src/metrics/http.js';
import { printMarkdownTable } from './lib/table.js';
import { measure, type LoadOptions, type LoadResult } from './lib/load.js';
import { startServerProcess, type BenchProcess } from './lib/process.js';
import { ussdRequests } from './ussd.js';

const SCRAPE_SECONDS = 5;

interface Case {
  name: string;
  options: () => LoadOptions;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const percent = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

export async function benchMetrics(): Promise<void> {
  const duration = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const cases: Case[] = [
    { name: 'USSD sessions', options: () => ({ duration, connections, requests: ussdRequests() }) },
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
  try {
    for (const { name, options } of cases) {
      const pairs: { off: LoadResult; on: LoadResult }[] = [];
      for (let round = 0; round < rounds; round++) {
        const order: [string, BenchProcess][] = round % 2 ? [['on', on], ['off', off]] : [['off', off], ['on', on]];
        const pair: Partial<Record<string, LoadResult>> = {};
        for (const [label, server] of order) pair[label] = await measure(`${name}, metrics ${label}`, server, options());
        pairs.push(pair as { off: LoadResult; on: LoadResult });
      }
      rows.push([
        name,
        pairs.map((p) => p.off.rps.toFixed(0)).join(' / '),
        pairs.map((p) => p.on.rps.toFixed(0)).join(' / '),
        percent(median(pairs.map((p) => p.on.rps / p.off.rps))),
        median(pairs.map((p) => p.off.cpuMsPerRequest)).toFixed(4),
        median(pairs.map((p) => p.on.cpuMsPerRequest)).toFixed(4),
        percent(median(pairs.map((p) => p.on.cpuMsPerRequest / p.off.cpuMsPerRequest))),
      ]);
    }
  } finally {
    clearInterval(scraper);
    await Promise.all([off.stop(), on.stop()]);
  }
  printMarkdownTable(
    `Metrics off vs on: ${connections} connections, ${rounds} rounds of ${duration} s runs per case, alternating; /metrics scraped every ${SCRAPE_SECONDS} s`,
    ['case', 'req/s off (each round)', 'req/s on (each round)', 'req/s on vs off (median of pairs)', 'CPU ms/req off', 'CPU ms/req on', 'CPU/req on vs off (median of pairs)'],
    rows,
  );
  console.log(`/metrics: ${scrapeMs.length} scrapes, median ${median(scrapeMs).toFixed(1)} ms each (under load)`);
  console.log(`front-door hook (two clock reads, the route's series, a histogram observation): ${hookNanoseconds().toFixed(0)} ns per request`);
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

if (import.meta.url === `file://${process.argv[1]}`) await benchMetrics();
