// Keeps `npm run bench:cluster` from rotting: both benchmarks with a very short run against one node, the control
// (3 independent nodes) and the 3-node cluster (3 nats-servers), through the compiled harness as a child process;
// the JSON it writes has every target's rows (USSD once per connection count), the cluster's CPU split into nodes and
// NATS, the ratios to one node, and the cluster's CPU over the control's.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ensureNatsServer } from './helpers/nats-cluster.js';

const BENCH = fileURLToPath(new URL('../dist/bench/cluster.js', import.meta.url));
t.setTimeout(180_000);

t.test('a short cluster benchmark writes one-node and cluster rows for USSD and chat', async (t) => {
  ensureNatsServer();
  const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-smoke-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'bench.json');
  const child = spawn(
    process.execPath,
    // The cluster at rest for 1 s, not 3: its nodes and servers spend tens of ms of CPU per second (> 0 is checked).
    [BENCH, '--seconds', '0.5', '--idle-seconds', '1', '--connections', '6,9', '--streams', '3', '--json', json],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  t.equal(code, 0, stderr);
  t.match(stdout, /\| 3 nodes \+ 3 NATS \(JetStream\) \| request \|/);
  t.match(stdout, /\| 3 nodes \+ 3 NATS \(JetStream\) \| stream \|/);

  const report = JSON.parse(readFileSync(json, 'utf8'));
  t.match(report, { commit: String, loadAverage: Array, options: { bench: 'cluster', clusterState: String } });
  t.same(
    report.rows.map((r: { bench: string; name: string }) => `${r.bench}: ${r.name}`),
    [
      'ussd: one node, LMDB',
      'ussd: 3 nodes, own LMDB each, no NATS (control)',
      'ussd: 3 nodes + 3 NATS (JetStream)',
      'ussd: one node, LMDB, 9 connections',
      'ussd: 3 nodes, own LMDB each, no NATS (control), 9 connections',
      'ussd: 3 nodes + 3 NATS (JetStream), 9 connections',
      'chat: one node, LMDB',
      'chat: 3 nodes, own LMDB each, no NATS (control)',
      'chat: 3 nodes + 3 NATS (JetStream)',
    ],
  );
  for (const r of report.rows) {
    t.equal(r.errors, 0, `${r.bench} ${r.name}: no errors`);
    for (const field of ['count', 'throughput', 'cpuMsPerOp', 'rssBytes'])
      t.ok(r[field] > 0, `${r.bench} ${r.name}: ${field} > 0`);
  }
  const groups = [report.rows.slice(0, 3), report.rows.slice(3, 6), report.rows.slice(6, 9)];
  for (const [base, control] of groups) t.match(control, { baseline: base.name, extra: { nodesCpuMsPerOp: Number } });
  for (const [base, control, cluster] of groups) {
    t.equal(cluster.baseline, base.name);
    t.equal(cluster.extra.cpuVsControl, cluster.cpuMsPerOp / control.cpuMsPerOp, 'CPU over the control, same run');
    // NATS may use less than one clock tick (10 ms) in half a second when the nodes send it little.
    t.ok(cluster.extra.nodesCpuMsPerOp > 0 && cluster.extra.natsCpuMsPerOp >= 0, 'CPU of the nodes and of NATS, apart');
    t.ok(
      Math.abs(cluster.extra.nodesCpuMsPerOp + cluster.extra.natsCpuMsPerOp - cluster.cpuMsPerOp) < 0.02,
      'the whole is nodes + NATS',
    );
    t.type(cluster.ratio.cpu, 'number', 'CPU ratio cluster / one node');
    // Every operation crosses NATS at least once (a write and its acknowledgement): messages in + out of the servers.
    t.ok(cluster.extra.natsMsgsPerOp >= 2, `NATS messages per operation (${cluster.extra.natsMsgsPerOp})`);
    t.ok(cluster.extra.idleCpuMsPerS > 0, 'the cluster at rest costs some CPU');
  }
  for (const [, control] of groups) t.equal(control.extra.natsMsgsPerOp, undefined, 'no NATS in the control');
  t.match(stdout, /USSD: 6 connections/);
  t.match(stdout, /USSD: 9 connections/);
});
