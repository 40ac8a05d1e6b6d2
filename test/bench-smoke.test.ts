// Keeps `npm run bench` from rotting: one benchmark (USSD against its bare baseline) with a very short run,
// through the compiled harness as a child process; the JSON it writes has every figure of a row, and the
// comparison tool reads it.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const RUN = fileURLToPath(new URL('../dist/bench/run.js', import.meta.url));
const COMPARE = fileURLToPath(new URL('../dist/bench/compare.js', import.meta.url));

function node(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('a short USSD row writes the figures and ratios as JSON', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'bench.json');
  const run = await node(RUN, [
    '--only',
    'ussd',
    '--engines',
    'uws,node',
    '--seconds',
    '0.5',
    '--connections',
    '4',
    '--json',
    json,
  ]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /\| USSD durable step \| request \|/);
  t.match(run.stdout, /^# ussd \(engine node\)$/m, 'the same benchmark on the portable engine, same run');

  const report = JSON.parse(readFileSync(json, 'utf8'));
  t.match(report, { tool: 'npm run bench', commit: String, node: String, cpus: Number, loadAverage: Array });
  t.same(report.options.engines, ['uws', 'node']);
  const [baseline, ussd, nodeBaseline, nodeUssd] = report.rows;
  t.equal(report.rows.length, 4);
  t.match(baseline, { bench: 'ussd', name: 'bare uWS, fixed CON', ratio: null });
  t.equal(ussd.baseline, baseline.name);
  t.match(nodeBaseline, { bench: 'ussd', name: 'bare uWS, fixed CON (engine node)', ratio: null });
  t.match(nodeUssd, { name: 'USSD durable step (engine node)', baseline: nodeBaseline.name });
  for (const r of report.rows) {
    t.equal(r.unit, 'request');
    t.equal(r.errors, 0, `${r.name}: no errors`);
    for (const field of ['count', 'throughput', 'cpuMsPerOp', 'rssBytes'])
      t.ok(r[field] > 0, `${r.name}: ${field} > 0`);
    // Latencies are whole milliseconds (autocannon): a bare route on a quiet machine answers its p99 in "0 ms".
    t.ok(r.p50Ms >= 0 && r.p99Ms >= r.p50Ms, `${r.name}: 0 <= p50 (${r.p50Ms}) <= p99 (${r.p99Ms})`);
  }
  for (const field of ['throughput', 'cpu']) t.type(ussd.ratio[field], 'number', `ratio.${field}`);
  // autocannon's latencies are whole milliseconds: a bare route at 4 connections may answer in "0 ms".
  t.ok(ussd.ratio.p50 === null || ussd.ratio.p50 > 0, 'ratio.p50 is a ratio or null');
  t.equal(ussd.ratio.cpu, ussd.cpuMsPerOp / baseline.cpuMsPerOp);

  // The file is what compare.js reads: a run against itself changes nothing.
  const compared = await node(COMPARE, [json, json]);
  t.equal(compared.code, 0, compared.stderr);
  t.match(compared.stdout, /\| ussd: USSD durable step \| \d+ → \d+ \(1\.00x\) \|/);
});

t.test('a bad flag stops the run with a message', async (t) => {
  const run = await node(RUN, ['--only', 'nope']);
  t.equal(run.code, 1);
  t.match(run.stderr, /--only: unknown benchmark nope/);
  const engine = await node(RUN, ['--engines', 'nginx']);
  t.equal(engine.code, 1);
  t.match(engine.stderr, /--engines: nginx \(known: uws, node\)/);
});

t.test('with --pairs, each row is over all its runs, and each pair ratio is printed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'bench.json');
  const run = await node(RUN, [
    '--only',
    'ussd',
    '--engines',
    'uws',
    '--seconds',
    '0.4',
    '--connections',
    '4',
    '--pairs',
    '2',
    '--json',
    json,
  ]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /each row over 2 runs alternating with the other's/);
  t.match(
    run.stdout,
    /USSD vs bare in each pair: CPU per step \d+\.\d\d \d+\.\d\d; steps per second \d+\.\d\d \d+\.\d\d/,
  );
  const { options, rows } = JSON.parse(readFileSync(json, 'utf8'));
  t.equal(options.pairs, 2);
  t.equal(rows.length, 2);
  t.equal(rows[1].ratio.cpu, rows[1].cpuMsPerOp / rows[0].cpuMsPerOp, 'the ratio is of the rows over all runs');
});

t.test('runs combined: operations, time and CPU summed; per-operation figures weighted by operations', async (t) => {
  const { overRuns } = await import('../dist/bench/lib/report.js');
  const run = (count: number, seconds: number, cpuMsPerOp: number, p50Ms: number, mainThreadCpuMsPerOp: number) => ({
    unit: 'request',
    count,
    throughput: count / seconds,
    p50Ms,
    p99Ms: p50Ms * 2,
    cpuMsPerOp,
    rssBytes: count,
    errors: 1,
    window: { startUs: 0, endUs: 1 },
    extra: { mainThreadCpuMsPerOp },
  });
  const one = run(100, 1, 0.5, 3, 0.2);
  t.equal(overRuns([one]), one, 'one run is itself');
  const both = overRuns([one, run(300, 2, 0.1, 5, 0.05)]);
  t.equal(both.count, 400);
  t.equal(both.throughput, 400 / 3, 'operations over the time of both');
  t.equal(both.cpuMsPerOp, (100 * 0.5 + 300 * 0.1) / 400, 'CPU over operations of both');
  t.equal(both.extra?.mainThreadCpuMsPerOp, (100 * 0.2 + 300 * 0.05) / 400);
  t.equal(both.p50Ms, 4, 'percentiles: the median of the runs');
  t.equal(both.errors, 2);
  t.equal(both.rssBytes, 300, 'RSS: the last run');
  t.equal(both.window, undefined, 'no single window');
});

t.test(
  'USSD session IDs: random and gateway-shaped by default, from a counter with --ussd-ids sequential',
  async (t) => {
    const { parseBenchOptions } = await import('../dist/bench/lib/options.js');
    const { ussdSessionIds } = await import('../dist/bench/ussd.js');
    t.match(parseBenchOptions([]), { ussdIds: 'gateway' });
    t.match(parseBenchOptions(['--ussd-ids', 'sequential']), { ussdIds: 'sequential' });
    t.match(parseBenchOptions([], { BENCH_USSD_IDS: 'sequential' }), { ussdIds: 'sequential' });
    t.throws(() => parseBenchOptions(['--ussd-ids', 'uuid']), /--ussd-ids must be gateway or sequential, not "uuid"/);
    const gateway = ussdSessionIds('x', 'gateway');
    const ids = Array.from({ length: 1000 }, (_, n) => gateway(n));
    for (const id of ids.slice(0, 3)) t.match(id, /^ATUid_[0-9a-f]{32}$/);
    t.equal(new Set(ids).size, ids.length, 'no two alike');
    t.not(JSON.stringify([...ids].sort()), JSON.stringify(ids), 'not in the order they were made');
    const sequential = ussdSessionIds('x', 'sequential');
    t.same([sequential(1), sequential(2)], [`x-${process.pid}-1`, `x-${process.pid}-2`]);
  },
);
