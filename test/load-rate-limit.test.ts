// The load tool against a server whose rate limit refuses most of the load (as a default server does: 100
// requests a minute per address) says so and names RATE_LIMIT_ALLOWLIST; the run's error rate over the SLO is
// flagged in the summary, the JSON and the HTML report; no percentile is printed above the max.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { summarize, distribution } from '../dist/src/tools/load/recorder.js';
import { startChildServer } from './helpers/child-server.js';
import { readJson, runLoadCli, startStub, tempDir } from './load-helpers.js';

t.setTimeout(120_000);

t.test('a real server with a small rate limit: the 429s are named, with RATE_LIMIT_ALLOWLIST', async (t) => {
  const server = await startChildServer(t, { RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_SECONDS: '60' });
  const dir = tempDir(t);
  const run = await runLoadCli([
    '--target',
    server.url,
    '--scenario',
    'gateway',
    '--paths',
    '/ixo/entity/params',
    '--rate',
    '60/s',
    '--duration',
    '1s',
    '--no-metrics',
    '--json',
    join(dir, 'r.json'),
    '--html',
    join(dir, 'r.html'),
  ]);
  t.equal(run.code, 0, run.stderr);
  const report = readJson(join(dir, 'r.json'));
  t.ok(report.errorsByKind['http 429'] > 0, `${report.errorsByKind['http 429']} answers were 429`);
  t.match(run.stdout, /refused with 429 by the server's rate limit/, 'the summary says why');
  t.match(run.stdout, /RATE_LIMIT_ALLOWLIST/, 'and names the allowlist');
  t.equal(report.hints.length, 1, 'the JSON report carries the hint');
  t.match(report.slo.violations.join(), /^errors /, 'the error rate broke the default SLO');
  t.match(run.stdout, /SLO p99<300ms,errors<0\.1% broken: errors/, 'the summary says the SLO broke');
  const html = readFileSync(join(dir, 'r.html'), 'utf8');
  t.match(
    html,
    /class="note slo-broken"><strong>Over the SLO \(p99&lt;300ms,errors&lt;0\.1%\):<\/strong> errors \d/,
    'the HTML report flags the error rate',
  );
  t.match(html, /RATE_LIMIT_ALLOWLIST/, 'and names the allowlist');
  server.child.kill('SIGTERM');
  await server.exited;
});

t.test('a run within the SLO says so, with no hint', async (t) => {
  const url = await startStub(t, (_req, res) => res.end('{}'));
  const dir = tempDir(t);
  const run = await runLoadCli([
    '--target',
    url,
    '--scenario',
    'gateway',
    '--paths',
    '/a',
    '--rate',
    '40/s',
    '--duration',
    '0.5s',
    '--no-metrics',
    '--json',
    join(dir, 'r.json'),
    '--html',
    join(dir, 'r.html'),
  ]);
  t.equal(run.code, 0, run.stderr);
  const report = readJson(join(dir, 'r.json'));
  t.same(report.hints, []);
  t.same(report.slo.violations, []);
  t.notMatch(run.stdout, /RATE_LIMIT_ALLOWLIST|NOTE:/);
  t.match(readFileSync(join(dir, 'r.html'), 'utf8'), /class="slo-held">Within the SLO/);
  t.ok(report.latencyMs.p999 <= report.latencyMs.max, 'p99.9 not above max');
});

t.test('percentiles never above the max, where the histogram buckets round up', async (t) => {
  const histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });
  // Above 2048 µs the buckets are wider than 1 µs: the bucket of 123457 µs reaches past it.
  for (let i = 0; i < 999; i++) histogram.recordValue(1000);
  histogram.recordValue(123_457);
  t.ok(
    histogram.getValueAtPercentile(99.95) > histogram.maxValue,
    'the raw histogram answers above its max (the case)',
  );
  const summary = summarize(histogram);
  t.equal(summary.max, 123.457);
  for (const key of ['p50', 'p90', 'p99', 'p999'] as const)
    t.ok(summary[key] <= summary.max, `${key} ${summary[key]} <= max`);
  t.ok(
    distribution(histogram).every((point) => point.ms <= summary.max),
    'every point of the distribution too',
  );
  histogram.destroy();
});
