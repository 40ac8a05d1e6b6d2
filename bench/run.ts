// `npm run bench -- [flags]` (flags in bench/lib/options.ts or --help): each benchmark against its baseline
// measured in the same run by the same client code path, the server under test in a child process of its own
// so its CPU (all threads, from /proc) is its alone. --json PATH / BENCH_JSON=PATH writes every row. Each
// benchmark runs once per front door engine (--engines; HTTP_ENGINE of the server under test).
import { pathToFileURL } from 'node:url';
import { benchAuth } from './auth.js';
import { benchGateway } from './gateway.js';
import { benchMemory } from './memory.js';
import { benchMetrics } from './metrics.js';
import { loadNativeUws } from '../src/http/uws-native.js';
import { parseBenchOptions, USAGE, type BenchName, type BenchOptions, type EngineName } from './lib/options.js';
import { runMeta, writeJson, type Row } from './lib/report.js';
import { benchSse } from './sse.js';
import { benchTracing } from './tracing.js';
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
  tracing: benchTracing,
};

export async function main(argv: string[]): Promise<void> {
  const native = loadNativeUws();
  const options = parseBenchOptions(argv, process.env, native.module ? ['uws', 'node'] : ['node']);
  if (options === 'help') return void console.log(USAGE);
  const meta = runMeta({ ...options });
  console.log(
    `# Benchmarks (${meta.date}, commit ${meta.commit}, node ${meta.node}, ${meta.cpus} × ${meta.cpuModel}, load average ${meta.loadAverage.join(' ')})`,
  );
  console.log(
    `# Engines: ${options.engines.join(', ')}${native.module ? ` (uWS: ${native.build} ${native.version})` : ` (no native uWS build loads here: ${native.reason})`}`,
  );
  const rows: Row[] = [];
  for (const name of options.only) {
    for (const engine of options.engines) {
      console.log(`\n# ${name}${engine === options.engines[0] ? '' : ` (engine ${engine})`}`);
      process.env.HTTP_ENGINE = engine;
      const measured = await benches[name](options);
      rows.push(...(engine === options.engines[0] ? measured : measured.map((row) => onEngine(row, engine))));
      // Written after each benchmark, so a failure later keeps what was measured.
      if (options.json) writeJson(options.json, meta, rows);
    }
  }
}

/** A row of a later engine's pass: named for it, as is its baseline (measured again in that pass). */
function onEngine(row: Row, engine: EngineName): Row {
  const tag = ` (engine ${engine})`;
  return { ...row, name: row.name + tag, ...(row.baseline ? { baseline: row.baseline + tag } : {}) };
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
