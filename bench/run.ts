// `npm run bench -- [flags]` (flags in bench/lib/options.ts or --help): each benchmark against its baseline
// measured in the same run by the same client code path, the server under test in a child process of its own
// so its CPU (all threads, from /proc) is its alone. --json PATH / BENCH_JSON=PATH writes every row.
import { pathToFileURL } from 'node:url';
import { benchAuth } from './auth.js';
import { benchGateway } from './gateway.js';
import { benchMemory } from './memory.js';
import { benchMetrics } from './metrics.js';
import { parseBenchOptions, USAGE, type BenchName, type BenchOptions } from './lib/options.js';
import { runMeta, writeJson, type Row } from './lib/report.js';
import { benchSse } from './sse.js';
import { benchUssd } from './ussd.js';
import { benchWebsocket } from './websocket.js';

const benches: Record<BenchName, (options: BenchOptions) => Promise<Row[]>> = {
  ussd: benchUssd,
  auth: benchAuth,
  sse: benchSse,
  gateway: benchGateway,
  memory: benchMemory,
  fanout: benchWebsocket,
  metrics: benchMetrics,
};

export async function main(argv: string[]): Promise<void> {
  const options = parseBenchOptions(argv);
  if (options === 'help') return void console.log(USAGE);
  const meta = runMeta({ ...options });
  console.log(`# Benchmarks (${meta.date}, commit ${meta.commit}, node ${meta.node}, ${meta.cpus} × ${meta.cpuModel}, load average ${meta.loadAverage.join(' ')})`);
  const rows: Row[] = [];
  for (const name of options.only) {
    console.log(`\n# ${name}`);
    rows.push(...(await benches[name](options)));
    // Written after each benchmark, so a failure later keeps what was measured.
    if (options.json) writeJson(options.json, meta, rows);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
