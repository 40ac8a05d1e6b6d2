// The cost of tracing on the USSD step: four copies of the server, all up throughout, the same client code path
// (ussd.ts's whole sessions): main's build without any tracing code (BENCH_TRACING_BASELINE: the root of a built
// checkout of main; absent, this build with tracing off stands in), this build with tracing off (no endpoint),
// and with an OTLP endpoint at 1% (parentbased_traceidratio 0.01) and 100% sampling. The spans go to a sink in
// this process that answers every export 200. Short runs rotate through the four, each round starting one further
// along, so the machine's drift hits all alike; each row's CPU ratio is the median of its per-round ratios to the
// baseline. `npm run bench -- --only tracing [--seconds N]`; BENCH_ROUNDS (4) sets the rounds.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { printMarkdownTable } from './lib/table.js';
import { measure } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';
import { startServerProcess, type BenchProcess } from './lib/process.js';
import { median, row, type Measured, type Row } from './lib/report.js';
import { ussdSessions } from './ussd.js';

/** A collector that takes every export and keeps nothing. */
async function otlpSink(): Promise<{ url: string; exports: () => number; close(): Promise<void> }> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () => exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const percent = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

export async function benchTracing(bench: BenchOptions): Promise<Row[]> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const mainRoot = process.env.BENCH_TRACING_BASELINE;
  if (mainRoot && !existsSync(join(mainRoot, 'dist/src/app/main.js')))
    throw new Error(`BENCH_TRACING_BASELINE=${mainRoot}: no dist/src/app/main.js there (build that checkout first)`);
  const sink = await otlpSink();
  const traced = (ratio: string) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: ratio,
  });
  const cases: { name: string; start: () => Promise<BenchProcess> }[] = [
    {
      name: mainRoot ? 'main, no tracing code' : 'tracing off (stands in for main)',
      start: () => startServerProcess({}, {}, mainRoot),
    },
    { name: 'tracing off', start: () => startServerProcess() },
    { name: '1% sampled', start: () => startServerProcess(traced('0.01')) },
    { name: '100% sampled', start: () => startServerProcess(traced('1')) },
  ];
  const servers: BenchProcess[] = [];
  const runs: Measured[][] = cases.map(() => []);
  try {
    for (const item of cases) servers.push(await item.start());
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < cases.length; k++) {
        const i = (round + k) % cases.length;
        const client = ussdSessions(`tracing${i}`, bench.ussdIds);
        const measured = await measure(servers[i], {
          duration: bench.seconds,
          connections: bench.connections,
          requests: client.requests,
        });
        runs[i].push({ ...measured, errors: measured.errors + client.wrong() });
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await sink.close();
  }
  const ratios = runs.map((list) => list.map((r, round) => r.cpuMsPerOp / runs[0][round].cpuMsPerOp));
  const mid = (list: Measured[]): Measured => ({
    ...list[0],
    count: list.reduce((n, r) => n + r.count, 0),
    throughput: median(list.map((r) => r.throughput)),
    p50Ms: median(list.map((r) => r.p50Ms)),
    p99Ms: median(list.map((r) => r.p99Ms)),
    cpuMsPerOp: median(list.map((r) => r.cpuMsPerOp)),
    errors: list.reduce((n, r) => n + r.errors, 0),
    window: undefined,
  });
  const baseline = row('tracing', `USSD step, ${cases[0].name}`, mid(runs[0]));
  const rows = [
    baseline,
    ...cases.slice(1).map((item, k) => {
      const result = row('tracing', `USSD step, ${item.name}`, mid(runs[k + 1]), baseline);
      result.extra.cpuVsBaselineMedianOfRounds = median(ratios[k + 1]);
      return result;
    }),
  ];
  printMarkdownTable(
    `Tracing: USSD sessions, ${bench.connections} connections, ${rounds} rounds of ${bench.seconds} s runs per case, rotating; ${sink.exports()} OTLP exports received`,
    [
      'case',
      'steps/s (median)',
      'CPU ms/step (median)',
      'CPU per round vs the first case',
      'CPU vs the first (median of rounds)',
    ],
    cases.map((item, i) => [
      item.name,
      median(runs[i].map((r) => r.throughput)).toFixed(0),
      median(runs[i].map((r) => r.cpuMsPerOp)).toFixed(4),
      ratios[i].map((x) => x.toFixed(3)).join(' / '),
      i === 0 ? '—' : `${median(ratios[i]).toFixed(3)}x (${percent(median(ratios[i]))})`,
    ]),
  );
  return rows;
}
