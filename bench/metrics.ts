// The cost of /metrics on the hot paths: the same server with METRICS_ENABLED=false and =true, alternating
// (off, on, off, on) so that drift on a shared machine hits both alike. While metrics are on, /metrics is
// scraped every second (a scrape interval far shorter than Prometheus's usual 15 s). Runs: realistic USSD
// sessions (every step committed to disk) and the landing route GET / (a route with no work of its own, where
// the per-request overhead weighs the most).
import { printMarkdownTable } from './lib/table.js';
import { benchSeconds, measure, type LoadOptions, type LoadResult } from './lib/load.js';
import { startServerProcess } from './lib/process.js';
import { ussdRequests } from './ussd.js';

const ROUNDS = 2;

interface Case {
  name: string;
  options: () => LoadOptions;
}

export async function benchMetrics(): Promise<void> {
  const duration = benchSeconds();
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const cases: Case[] = [
    { name: 'USSD sessions', options: () => ({ duration, connections, requests: ussdRequests() }) },
    { name: 'GET / (bare route)', options: () => ({ duration, connections, path: '/' }) },
  ];
  const results = new Map<string, LoadResult[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const enabled of [false, true]) {
      const server = await startServerProcess({ METRICS_ENABLED: String(enabled) });
      const scraper = enabled ? setInterval(() => void fetch(`http://127.0.0.1:${server.port}/metrics`).then((r) => r.text()), 1000) : undefined;
      for (const { name, options } of cases) {
        const key = `${name}|${enabled}`;
        const result = await measure(`${name}, metrics ${enabled ? 'on' : 'off'}`, server, options());
        results.set(key, [...(results.get(key) ?? []), result]);
      }
      clearInterval(scraper);
      await server.stop();
    }
  }

  const rows = [];
  for (const { name } of cases) {
    const off = results.get(`${name}|false`)!;
    const on = results.get(`${name}|true`)!;
    const rps = (runs: LoadResult[]) => runs.reduce((sum, r) => sum + r.rps, 0) / runs.length;
    const cpu = (runs: LoadResult[]) => runs.reduce((sum, r) => sum + r.cpuMsPerRequest, 0) / runs.length;
    rows.push([
      name,
      off.map((r) => r.rps.toFixed(0)).join(' / '),
      on.map((r) => r.rps.toFixed(0)).join(' / '),
      `${((rps(on) / rps(off) - 1) * 100).toFixed(1)}%`,
      cpu(off).toFixed(4),
      cpu(on).toFixed(4),
      `${((cpu(on) / cpu(off) - 1) * 100).toFixed(1)}%`,
    ]);
  }
  printMarkdownTable(
    `Metrics off vs on: ${connections} connections, ${duration} s per run, ${ROUNDS} rounds each (off, on alternating)`,
    ['run', 'req/s off (each round)', 'req/s on (each round)', 'req/s on vs off', 'CPU ms/req off', 'CPU ms/req on', 'CPU/req on vs off'],
    rows,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMetrics();
