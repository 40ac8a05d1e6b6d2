// --compare: a figure worse than the old run's by more than --max-regression fails the command (exit 1); a run
// at least as good passes. The old runs are this run's own report made better or worse on purpose.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJson, runLoadCli, runLoadInProcess, startStub, tempDir } from './load-helpers.js';

t.test('compare fails on a regression and passes otherwise', async (t) => {
  // Its /metrics gives this process's own CPU, so the report has a CPU per request to compare.
  const url = await startStub(t, (req, res) => {
    if (req.url !== '/metrics') return res.end('ok');
    const { user, system } = process.cpuUsage();
    res.end(`process_cpu_seconds_total ${(user + system) / 1e6}\n`);
  });
  const dir = tempDir(t);
  const base = ['--target', url, '--scenario', 'gateway', '--paths', '/a', '--rate', '100/s', '--duration', '1s'];
  const first = await runLoadInProcess([...base, '--json', join(dir, 'now.json')]);
  t.equal(first.code, 0, first.stderr);
  const now = readJson(join(dir, 'now.json'));
  t.equal(now.requests.errors, 0);
  t.ok(now.cost.cpuMsPerRequest > 0, 'a CPU per request from /metrics');

  // An old run far better than anything this run can do: lower latencies, more throughput.
  const better = structuredClone(now);
  for (const key of ['p50', 'p90', 'p99', 'p999']) better.latencyMs[key] = now.latencyMs[key] / 100;
  better.throughput.rps = now.throughput.rps * 10;
  better.cost.cpuMsPerRequest = now.cost.cpuMsPerRequest / 100;
  writeFileSync(join(dir, 'better.json'), JSON.stringify(better));
  const regressed = await runLoadCli([...base, '--compare', join(dir, 'better.json')]);
  t.equal(regressed.code, 1, 'a regression exits 1 (the command as run from a shell)');
  t.match(regressed.stdout, /\| latency p99 ms \|.*\| REGRESSION \|/);
  t.match(regressed.stdout, /\| throughput req\/s \|.*\| REGRESSION \|/);
  t.match(regressed.stdout, /\| CPU ms per request \|.*\| REGRESSION \|/);
  t.match(regressed.stdout, /regression\(s\): /);

  // An old run far worse: the same run passes.
  const worse = structuredClone(now);
  for (const key of ['p50', 'p90', 'p99', 'p999']) worse.latencyMs[key] = now.latencyMs[key] * 100 + 1000;
  worse.throughput.rps = now.throughput.rps / 10;
  worse.errorRate = 0.05;
  worse.cost.cpuMsPerRequest = now.cost.cpuMsPerRequest * 100 + 1;
  writeFileSync(join(dir, 'worse.json'), JSON.stringify(worse));
  const passed = await runLoadInProcess([...base, '--compare', join(dir, 'worse.json'), '--max-regression', '10%']);
  t.equal(passed.code, 0, passed.stdout);
  t.match(passed.stdout, /no regression/);
  t.notMatch(passed.stdout, /REGRESSION/);
});

t.test('a missing or foreign --compare file is refused before the run (exit 2)', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'other.json'), '{"hello":1}');
  const missing = await runLoadInProcess(['--target', 'http://127.0.0.1:9', '--compare', join(dir, 'none.json')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--compare .*none\.json/);
  const foreign = await runLoadInProcess(['--target', 'http://127.0.0.1:9', '--compare', join(dir, 'other.json')]);
  t.equal(foreign.code, 2);
  t.match(foreign.stderr, /not a report of npm run load/);
});
