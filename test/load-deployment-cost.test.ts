// `npm run load` against a real cluster (3 NATS servers, 3 nodes) with the other nodes and the NATS servers named:
// the cost per request covers every process, each node's CPU as its own /proc counts it, each NATS server's within
// the estimate's error, its messages exact; a process that cannot be read is named with the reason.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { readJson, runLoadInProcess, tempDir } from './load-helpers.js';
import { freePorts } from '../dist/src/tools/local-processes.js';

t.setTimeout(120_000);

/** CPU seconds of a process so far (utime + stime from /proc, in clock ticks of 1/100 s). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const TOKEN = 'load-cost-test-token';

t.test('cost per request of every node and NATS server of a cluster', async (t) => {
  const nats = await startTestNatsCluster(t);
  const cluster = await startTestNodes(t, nats, {
    env: { OPERATOR_TOKEN: TOKEN, RATE_LIMIT_ALLOWLIST: '127.0.0.0/8,::1', LOG_LEVEL: 'warn' },
  });
  const [target, ...others] = cluster.nodes;
  const monitors = nats.servers.map((server) => `http://127.0.0.1:${server.monitorPort}`);
  const pids = [...cluster.nodes.map((node) => node.pid), ...nats.servers.map((server) => server.pid!)];
  const out = join(tempDir(t), 'report.json');

  const before = pids.map(cpuSecondsOf);
  const run = await runLoadInProcess([
    '--target',
    target.url,
    '--scenario',
    'ussd',
    '--duration',
    '2s',
    '--connections',
    '12',
    '--think',
    '0ms',
    '--metrics-token',
    TOKEN,
    '--metrics-target',
    others.map((node) => node.url).join(','),
    ...monitors.flatMap((url) => ['--nats-monitor', url]),
    '--json',
    out,
  ]);
  const spent = pids.map((pid, i) => cpuSecondsOf(pid) - before[i]);
  t.equal(run.code, 0, run.stderr);
  const report = readJson(out);
  const { cost } = report;
  t.ok(report.requests.ok > 0, `${report.requests.ok} steps answered`);
  t.equal(cost.requests, report.requests.ok, 'per OK request');
  t.same(
    cost.processes.map((p: { source: string; kind: string }) => [p.source, p.kind]),
    [...cluster.nodes.map((node) => [node.url, 'server']), ...monitors.map((url) => [url, 'nats'])],
    'the target, the other nodes, then the NATS servers',
  );
  // /proc's window holds the meter's, plus the tool's start and its last second (NATS's final sample), when the
  // nodes idle. A NATS server's figure is an estimate from its cpu%, which it recomputes over whole seconds: within
  // a tenth on runs of 10 s (docs/load.md), coarse on this one of 2 s: only its order of magnitude is checked here.
  cost.processes.forEach((p: { source: string; kind: string; cpuSeconds: number }, i: number) => {
    const figures = `${p.source} (${p.kind}): ${p.cpuSeconds.toFixed(3)} s, ${spent[i].toFixed(2)} by /proc`;
    if (p.kind === 'server') t.ok(p.cpuSeconds > 0.9 * spent[i] - 0.1 && p.cpuSeconds <= spent[i] + 0.02, figures);
    else t.ok(p.cpuSeconds > 0.3 * spent[i] && p.cpuSeconds < 1.5 * spent[i] + 0.1, figures);
  });
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const natsProcesses = cost.processes.filter((p: { kind: string }) => p.kind === 'nats');
  t.ok(
    natsProcesses.every((p: { messages: number }) => p.messages > 0),
    'every NATS server moved messages',
  );
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-9 * Math.max(1, b);
  const messages = sum(natsProcesses.map((p: { messages: number }) => p.messages));
  t.ok(close(cost.natsMessagesPerRequest, messages / cost.requests), 'NATS messages: every server, per request');
  const cpuMs = sum(cost.processes.map((p: { cpuSeconds: number }) => p.cpuSeconds)) * 1000;
  t.ok(close(cost.cpuMsPerRequest, cpuMs / cost.requests), 'CPU: every process, per request');
  t.match(run.stdout, /Cost per OK request \(\d+ requests\): CPU \d+\.\d{3} ms in all, NATS messages \d+\.\d{2}/);

  // A server nobody listens on and a node named as a NATS monitor: each named with its reason, no total.
  const [closed] = await freePorts(1);
  const bad = await runLoadInProcess([
    '--target',
    target.url,
    '--scenario',
    'ussd',
    '--duration',
    '0.5s',
    '--metrics-token',
    TOKEN,
    '--metrics-target',
    `http://127.0.0.1:${closed}`,
    '--nats-monitor',
    others[0].url,
    '--json',
    out,
  ]);
  t.equal(bad.code, 0, 'the run itself is unharmed');
  const badCost = readJson(out).cost;
  t.match(badCost.processes, [
    { source: target.url, cpuSeconds: Number },
    { source: `http://127.0.0.1:${closed}`, cpuSeconds: null, reason: /ECONNREFUSED|refused/ },
    { source: others[0].url, kind: 'nats', cpuSeconds: null, reason: 'GET /varz answered 404' },
  ]);
  t.equal(badCost.cpuMsPerRequest, null, 'no total when a process is missing');
  t.equal(badCost.natsMessagesPerRequest, null);
  t.match(bad.stdout, /GET \/varz answered 404/);
});
