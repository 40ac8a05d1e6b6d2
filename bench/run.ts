// `npm run bench`: every benchmark, one after the other, each against its baseline measured in the same run.
// BENCH_SECONDS (default 10) sets the length of each load run; BENCH_ONLY=ussd,gateway,... picks some.
import { benchGateway } from './gateway.js';
import { benchMetrics } from './metrics.js';
import { benchOracle } from './oracle.js';
import { benchUssd } from './ussd.js';
import { benchWebsocket } from './websocket.js';

const benches: Record<string, () => Promise<unknown>> = {
  ussd: benchUssd,
  oracle: benchOracle,
  gateway: benchGateway,
  websocket: benchWebsocket,
  metrics: benchMetrics,
};

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
console.log(`# Benchmarks (${new Date().toISOString()}, node ${process.version}, ${(await import('node:os')).cpus().length} cores)`);
for (const [name, run] of Object.entries(benches)) {
  if (only && !only.includes(name)) continue;
  console.log(`\n# ${name}`);
  await run();
}
