// Units of the load tool's dense logic: arrival scheduling, SLO parsing and checking, capacity search,
// comparison, Prometheus parsing, the command line.
import t from 'tap';
import fc from 'fast-check';
import { searchCapacity } from '../dist/src/tools/load/capacity.js';
import { compareReports } from '../dist/src/tools/load/compare.js';
import { arrivalTime, arrivalsDue, totalArrivals } from '../dist/src/tools/load/open-loop.js';
import { parseOptions } from '../dist/src/tools/load/options.js';
import { parsePrometheus } from '../dist/src/tools/load/server-metrics.js';
import { parseSlo, sloViolations } from '../dist/src/tools/load/slo.js';
import { ussdTexts } from '../dist/src/tools/load/scenarios/ussd.js';
import { parseDuration, parseRate } from '../dist/src/tools/load/units.js';

t.test('arrival schedule: evenly spaced from 0, due counts never skip or exceed the total', async (t) => {
  t.equal(totalArrivals(200, 1500), 300);
  t.equal(totalArrivals(3, 1000), 3);
  t.equal(totalArrivals(0.5, 3000), 2, 'one every 2 s in 3 s: at 0 and 2 s');
  t.equal(arrivalTime(0, 200), 0);
  t.equal(arrivalTime(3, 200), 15);
  t.equal(arrivalsDue(0, 200, 1500), 1, 'the first journey is due at once');
  t.equal(arrivalsDue(14.99, 200, 1500), 3);
  t.equal(arrivalsDue(15, 200, 1500), 4);
  t.equal(arrivalsDue(60_000, 200, 1500), 300, 'a late pump never schedules past the end');
  fc.assert(
    fc.property(
      fc.double({ min: 0.1, max: 50_000, noNaN: true }),
      fc.integer({ min: 1, max: 20_000 }),
      fc.double({ min: 0, max: 30_000, noNaN: true }),
      (rate, duration, elapsed) => {
        const due = arrivalsDue(elapsed, rate, duration);
        const total = totalArrivals(rate, duration);
        // Every journey counted as due is due by now, and the next one is not (unless all are out).
        return (
          due <= total &&
          arrivalTime(due - 1, rate) <= elapsed + 1e-6 &&
          (due === total || arrivalTime(due, rate) > elapsed - 1e-6) &&
          arrivalTime(total - 1, rate) < duration + 1e-6
        );
      },
    ),
  );
});

t.test('SLO: parsing and checking', async (t) => {
  t.same(parseSlo('p99<300ms,errors<0.1%'), [
    { kind: 'latency', percentile: 99, label: 'p99', maxMs: 300 },
    { kind: 'errors', maxRate: 0.001 },
  ]);
  t.same(
    parseSlo(' p999 < 1s , p50<20ms ').map((c) => c.kind === 'latency' && [c.percentile, c.maxMs]),
    [
      [99.9, 1000],
      [50, 20],
    ],
  );
  t.equal(
    parseSlo('p99.99<2s')[0].kind === 'latency' && (parseSlo('p99.99<2s')[0] as { percentile: number }).percentile,
    99.99,
  );
  t.throws(() => parseSlo(''), /at least one clause/);
  t.throws(() => parseSlo('p99>300ms'), /neither pNN<time/);
  t.throws(() => parseSlo('p99<fast'), /300ms, 10s or 2m/);
  t.throws(() => parseSlo('errors<lots'), /10% or 0.1%/);
  t.throws(() => parseSlo('p0<1s'), /between 0 and 100/);

  const slo = parseSlo('p99<300ms,errors<0.1%');
  const figures = (p99: number, errorRate: number, completed = 1000) => ({
    latencyAt: (p: number) => (p === 99 ? p99 : 1),
    errorRate,
    completed,
  });
  t.same(sloViolations(slo, figures(299.9, 0.0009)), []);
  t.same(sloViolations(slo, figures(300, 0)), ['p99 300.0ms >= 300ms'], 'the bound is strict');
  t.same(sloViolations(slo, figures(10, 0.001)), ['errors 0.100% >= 0.1%']);
  t.same(sloViolations(slo, figures(10, 0, 0)), ['no request completed']);
});

t.test('capacity search: rises by the factor, stops at the first break, bisects, never past the max', async (t) => {
  const tried: number[] = [];
  const holdsBelow = (limit: number) => async (rate: number) => {
    tried.push(rate);
    return { rate, held: rate < limit };
  };
  const found = await searchCapacity({ startRate: 10, factor: 2, maxRate: 1000, refine: 2 }, holdsBelow(70));
  t.same(tried, [10, 20, 40, 80, 60, 70], 'up by 2 to the break, then two bisections');
  t.equal(found.highestHeld, 60);
  t.same(
    found.steps.map((s) => s.held),
    [true, true, true, false, true, false],
  );

  tried.length = 0;
  const never = await searchCapacity({ startRate: 10, factor: 2, maxRate: 1000, refine: 2 }, holdsBelow(5));
  t.same(tried, [10], 'nothing to bisect when the first step breaks');
  t.equal(never.highestHeld, undefined);

  tried.length = 0;
  const always = await searchCapacity({ startRate: 10, factor: 3, maxRate: 100, refine: 2 }, holdsBelow(Infinity));
  t.same(tried, [10, 30, 90], 'stops at --max-rate');
  t.equal(always.highestHeld, 90);
});

t.test('compare: worse by more than the limit is a regression, in the right direction per figure', async (t) => {
  const report = (rps: number, p99: number, errorRate: number, extra: object = {}) =>
    ({ throughput: { rps }, latencyMs: { p50: 1, p90: 2, p99, p999: p99 }, errorRate, timings: {}, ...extra }) as never;
  const worse = (a: never, b: never) =>
    compareReports(a, b, 0.1)
      .filter((d) => d.worse)
      .map((d) => d.figure);
  t.same(worse(report(100, 10, 0), report(100, 10, 0)), []);
  t.same(worse(report(100, 10, 0), report(91, 10.9, 0)), [], 'within 10%');
  t.same(worse(report(100, 10, 0), report(89, 11.1, 0)), ['throughput req/s', 'latency p99 ms', 'latency p999 ms']);
  t.same(worse(report(100, 10, 0), report(500, 1, 0)), [], 'better is never a regression');
  t.same(worse(report(100, 10, 0), report(100, 10, 0.0009)), [], 'error rate: a rise under 0.1 point is noise');
  t.same(worse(report(100, 10, 0), report(100, 10, 0.002)), ['error rate']);
  t.same(worse(report(100, 10, 0.05), report(100, 10, 0.054)), [], 'error rate: within 10% of the old rate');
  t.same(
    worse(
      report(100, 10, 0, { capacity: { highestRate: 200 } }),
      report(100, 10, 0, { capacity: { highestRate: 150 } }),
    ),
    ['capacity req/s'],
  );
  const chat = (p99: number) => report(100, 10, 0, { timings: { 'chat done': { p99 } } });
  t.same(worse(chat(100), chat(120)), ['chat done p99 ms']);
});

t.test('Prometheus text: samples with labels, comments and junk skipped', async (t) => {
  const samples = parsePrometheus(
    [
      '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
      '# TYPE process_cpu_seconds_total counter',
      'process_cpu_seconds_total 12.5',
      'actor_mailbox_depth{host="0"} 3',
      'actor_mailbox_depth{host="1",kind="a \\"q\\""} 4 1700000000000',
      'garbage line',
      'nan_metric NaN',
    ].join('\n'),
  );
  t.same(samples.slice(0, 3), [
    { name: 'process_cpu_seconds_total', labels: {}, value: 12.5 },
    { name: 'actor_mailbox_depth', labels: { host: '0' }, value: 3 },
    { name: 'actor_mailbox_depth', labels: { host: '1', kind: 'a "q"' }, value: 4 },
  ]);
  t.equal(samples.length, 3, 'no sample from the garbage line or a NaN (nothing to chart)');
});

t.test('command line: defaults, units and clear refusals', async (t) => {
  const options = parseOptions(
    ['--target', 'http://127.0.0.1:3000', '--rate', '50/s', '--duration', '2m', '--think', '500ms-2s'],
    false,
  );
  if (options === 'help') throw new Error('unexpected help');
  t.equal(options.rate, 50);
  t.equal(options.durationMs, 120_000);
  t.same(options.thinkMs, [500, 2000]);
  t.equal(options.scenario, 'gateway');
  t.equal(options.progress, false, 'no progress lines unless on a terminal or asked');
  t.equal(parseOptions(['--help']), 'help');
  const capacity = parseOptions(['--target', 'http://h:1', '--find-capacity'], true);
  t.equal(capacity !== 'help' && capacity.rate, 10, 'a capacity search starts at 10/s by default');
  t.equal(capacity !== 'help' && capacity.progress, true);
  t.equal(parseRate('120/m'), 2);
  t.equal(parseDuration('1.5'), 1500);
  const refused: [string[], RegExp][] = [
    [[], /--target is required/],
    [['--target', 'ftp://x'], /http:\/\/ or https:\/\//],
    [['--target', 'http://h:1', '--scenario', 'nope'], /--scenario must be one of/],
    [['--target', 'http://h:1', '--scenario', 'chat'], /--oracle-did is required/],
    [['--target', 'http://h:1', '--scenario', 'mix', '--mix', 'ussd=1,tea=2'], /unknown scenario "tea"/],
    [['--target', 'http://h:1', '--rate', '0'], /--rate must be a positive number/],
    [['--target', 'http://h:1', '--paths', 'ixo/x'], /must start with \//],
    [['--target', 'http://h:1', '--think', '2s-1s'], /from low to high/],
    [['--target', 'http://h:1', '--header', 'nocolon'], /name: value/],
    [['--target', 'http://h:1', '--step-factor', '1'], /above 1/],
    [['--target', 'http://h:1', '--nats-monitor', 'ftp://n:8222'], /--nats-monitor must be an http/],
    [['--target', 'http://h:1', '--metrics-target', 'h2:3000'], /--metrics-target must be/],
    [['--target', 'http://h:1', '--metrics-target', 'http://h2:1', '--no-metrics'], /leave out --no-metrics/],
  ];
  const cluster = parseOptions(
    ['--target', 'http://a:1', '--metrics-target', 'http://b:1,http://c:1', '--nats-monitor', 'http://n:8222'],
    false,
  );
  t.same(
    cluster !== 'help' && [cluster.metricsTargets.map(String), cluster.natsMonitors.map(String)],
    [['http://b:1/', 'http://c:1/'], ['http://n:8222/']],
    'other servers and NATS monitors, comma-separated or repeated',
  );
  for (const [argv, message] of refused) t.throws(() => parseOptions(argv, false), message, argv.join(' '));
});

t.test('USSD text history: the dial, then the inputs joined by *', async (t) => {
  t.same(ussdTexts(['1', '1', '0']), ['', '1', '1*1', '1*1*0']);
  t.same(ussdTexts([]), ['']);
});
