// Sums the .cpuprofile files of a server run under `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"` (one file
// per thread: the main thread, actor hosts, the CPU pool): per thread, the top functions by self time, and the
// share of CPU spent in each area, counted inclusively (a sample counts for every area on its stack), e.g. time
// in LMDB's commit called from an actor. Idle samples are left out, and so is piscina's Atomics.wait loop (a
// blocked thread, not CPU). With --json/--row only the samples taken while that row of the run was measured
// count (the profile's timestamps and the row's window are both CLOCK_MONOTONIC), so start-up is left out.
//   node dist/bench/profile-summary.js DIR [--top 15] [--json RUN.json --row 'USSD durable step']
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Row } from './lib/report.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Areas by the frame's script or name; the first match names a frame. */
const AREAS: [string, (frame: ProfileNode['callFrame']) => boolean][] = [
  ['comlink', (f) => f.url.includes('comlink')],
  ['runtime RPC (src/runtime/rpc, batching endpoint)', (f) => /\/src\/runtime\/(rpc|batching-endpoint)\./.test(f.url)],
  [
    'postMessage / MessagePort',
    (f) =>
      /postMessage|MessagePort|messageport/.test(f.functionName) ||
      f.url.includes('worker_threads') ||
      f.url.includes('internal/worker'),
  ],
  ['NATS client (@nats-io)', (f) => f.url.includes('@nats-io')],
  ['cluster (src/cluster)', (f) => f.url.includes('/src/cluster/')],
  ['LMDB (lmdb-js and its commit)', (f) => f.url.includes('/lmdb/')],
  // uWS's work is native: it shows here only when called through its JS wrapper, mostly inside src/http.
  ['uWebSockets.js', (f) => f.url.includes('uWebSockets')],
  ['HTTP front door (src/http)', (f) => f.url.includes('/src/http/')],
  ['validation (valibot)', (f) => f.url.includes('valibot')],
  ['JSON parse/stringify', (f) => (f.functionName === 'parse' || f.functionName === 'stringify') && f.url === ''],
  ['logging (pino)', (f) => f.url.includes('pino')],
  ['actor runtime (src/runtime)', (f) => f.url.includes('/src/runtime/')],
  ['USSD (src/ussd)', (f) => f.url.includes('/src/ussd/')],
  // Inclusive, so a span's end counts the batch export it sets off (the protobuf serialiser and the HTTP send).
  [
    'tracing (OpenTelemetry SDK and exporter, src/telemetry)',
    (f) => f.url.includes('@opentelemetry') || f.url.includes('/src/telemetry/'),
  ],
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
];

const label = (f: ProfileNode['callFrame']) =>
  `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${f.lineNumber + 1}` : ''}`.trim();

const IDLE = new Set(['(idle)', 'atomicsWaitLoop']);

function summarise(file: string, top: number, window?: Row['window']): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.startUs || at > window.endUs)) return;
    if (IDLE.has(node.callFrame.functionName)) return;
    total += delta;
    self.set(label(node.callFrame), (self.get(label(node.callFrame)) ?? 0) + delta);
    const areas = new Set<string>();
    for (let frame: number | undefined = id; frame !== undefined; frame = parent.get(frame)) {
      const area = AREAS.find(([, match]) => match(byId.get(frame!)!.callFrame))?.[0];
      if (area) areas.add(area);
    }
    for (const area of areas) inclusive.set(area, (inclusive.get(area) ?? 0) + delta);
  });
  if (!total) return;
  const ms = (us: number) => (us / 1000).toFixed(0);
  const share = (us: number) => `${((us / total) * 100).toFixed(1)}%`;
  console.log(
    `\n## ${file.split('/').pop()}: ${ms(total)} ms of CPU samples (idle excluded${window ? ', measured window only' : ''})`,
  );
  console.log('| self time | share | function |\n|---|---|---|');
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`| ${ms(us)} ms | ${share(us)} | \`${name}\` |`);
  console.log('\n| area (inclusive) | share |\n|---|---|');
  for (const [area, us] of [...inclusive].sort((a, b) => b[1] - a[1])) console.log(`| ${area} | ${share(us)} |`);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '15' }, json: { type: 'string' }, row: { type: 'string' } },
});
const [dir] = positionals;
if (!dir || Boolean(values.json) !== Boolean(values.row)) {
  console.error("usage: node dist/bench/profile-summary.js DIR [--top 15] [--json RUN.json --row 'row name']");
  process.exit(2);
}
let window: Row['window'];
if (values.json) {
  const rows = (JSON.parse(readFileSync(values.json, 'utf8')) as { rows: Row[] }).rows;
  window = rows.find((r) => r.name === values.row)?.window;
  if (!window) throw new Error(`no row named ${JSON.stringify(values.row)} with a window in ${values.json}`);
}
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort())
  summarise(join(dir, file), Number(values.top), window);
