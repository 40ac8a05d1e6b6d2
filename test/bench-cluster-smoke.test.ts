// Keeps `npm run bench:cluster` from rotting: both benchmarks with a very short run against one node, the control
// (3 independent nodes) and the 3-node cluster (3 nats-servers), through the compiled harness as a child process;
// the JSON it writes has every target's rows (USSD once per connection count; the control and the cluster once per
// round), the cluster's CPU split into nodes and NATS, the ratios to one node, and the cluster's CPU over the
// control's of the same round.
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
    [BENCH, ...'--seconds 0.5 --idle-seconds 1 --connections 6,9 --streams 3 --rounds 2'.split(' '), '--json', json],
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
  const group = (bench: string, suffix: string) => [
    `${bench}: one node, LMDB${suffix}`,
    `${bench}: 3 nodes, own LMDB each, no NATS (control)${suffix}`,
    `${bench}: 3 nodes + 3 NATS (JetStream)${suffix}`,
    `${bench}: 3 nodes, own LMDB each, no NATS (control)${suffix}, round 2`,
    `${bench}: 3 nodes + 3 NATS (JetStream)${suffix}, round 2`,
  ];
  t.same(
    report.rows.map((r: { bench: string; name: string }) => `${r.bench}: ${r.name}`),
    [...group('ussd', ''), ...group('ussd', ', 9 connections'), ...group('chat', '')],
  );
  for (const r of report.rows) {
    t.equal(r.errors, 0, `${r.bench} ${r.name}: no errors`);
    for (const field of ['count', 'throughput', 'cpuMsPerOp', 'rssBytes'])
      t.ok(r[field] > 0, `${r.bench} ${r.name}: ${field} > 0`);
  }
  // Each group: one node, then per round the control and the cluster, as [base, control, cluster] triples.
  const rounds = [0, 5, 10].flatMap((at) => {
    const [base, control, cluster, control2, cluster2] = report.rows.slice(at, at + 5);
    return [
      [base, control, cluster],
      [base, control2, cluster2],
    ];
  });
  for (const [base, control] of rounds) t.match(control, { baseline: base.name, extra: { nodesCpuMsPerOp: Number } });
  for (const [base, control, cluster] of rounds) {
    t.equal(cluster.baseline, base.name);
    t.equal(cluster.extra.cpuVsControl, cluster.cpuMsPerOp / control.cpuMsPerOp, 'CPU over the control, same round');
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
  for (const [, control] of rounds) t.equal(control.extra.natsMsgsPerOp, undefined, 'no NATS in the control');
  const byRound = [...stdout.matchAll(/cpuVsControl by round: ([\d.]+), ([\d.]+) \(median ([\d.]+)\)/g)];
  t.equal(byRound.length, 3, 'a line of ratios by round per case');
  byRound.forEach((line, i) => {
    const ratios = [rounds[2 * i][2], rounds[2 * i + 1][2]].map((cluster) => cluster.extra.cpuVsControl as number);
    t.same(
      line.slice(1),
      [...ratios, (ratios[0] + ratios[1]) / 2].map((ratio) => ratio.toFixed(2)),
      `case ${i}: each round's ratio and their median`,
    );
  });
  t.match(stdout, /USSD: 6 connections/);
  t.match(stdout, /USSD: 9 connections/);
});
