// autocannon runs and the table every benchmark prints.
import autocannon from 'autocannon';
import { printMarkdownTable } from './table.js';
import type { BenchProcess } from './process.js';

export interface LoadResult {
  name: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Server CPU milliseconds per request (all its threads), independent of the load generator's speed. */
  cpuMsPerRequest: number;
}

export type LoadOptions = Omit<autocannon.Options, 'url'> & { path?: string };

export async function measure(name: string, target: BenchProcess, options: LoadOptions): Promise<LoadResult> {
  const { path = '/', ...rest } = options;
  const cpuBefore = target.cpuSeconds();
  const result = await autocannon({ url: `http://127.0.0.1:${target.port}${path}`, ...rest });
  const cpuSeconds = target.cpuSeconds() - cpuBefore;
  const requests = result.requests.total;
  return {
    name,
    requests,
    rps: requests / (result.duration || 1),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuMsPerRequest: requests ? (cpuSeconds * 1000) / requests : NaN,
  };
}

export function printTable(title: string, baseline: LoadResult, rows: LoadResult[]): void {
  const columns = ['run', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'errors', 'non-2xx', 'req/s vs baseline', 'CPU/req vs baseline'];
  printMarkdownTable(title, columns, [baseline, ...rows].map((r) => [
    r.name, r.requests, r.rps.toFixed(0), r.p50, r.p99, r.cpuMsPerRequest.toFixed(4), r.errors, r.non2xx,
    `${((r.rps / baseline.rps) * 100).toFixed(1)}%`, `${(r.cpuMsPerRequest / baseline.cpuMsPerRequest).toFixed(2)}x`,
  ]));
}

/** Seconds per run: BENCH_SECONDS, default 10. */
export const benchSeconds = () => Number(process.env.BENCH_SECONDS ?? 10);
