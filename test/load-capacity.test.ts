// --find-capacity against a deliberately slow server: it answers one request at a time, 5 ms each, so it can
// never sustain more than 200 requests/s. The search must report a rate that held the SLO below that, and the
// step above it must have broken the SLO.
import t from 'tap';
import { join } from 'node:path';
import { readJson, runLoadCli, startStub, tempDir } from './load-helpers.js';

const SERVICE_MS = 5;
const CEILING = 1000 / SERVICE_MS;

t.test('finds the highest rate a serial 5 ms server holds within p99<250ms', async (t) => {
  let queue = Promise.resolve();
  const url = await startStub(t, (_req, res) => {
    queue = queue.then(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            res.end('ok');
            resolve();
          }, SERVICE_MS),
        ),
    );
  });
  const out = join(tempDir(t), 'capacity.json');
  const run = await runLoadCli([
    '--target',
    url,
    '--scenario',
    'gateway',
    '--paths',
    '/slow',
    '--find-capacity',
    '--slo',
    'p99<250ms,errors<0.1%',
    '--rate',
    '30/s',
    '--step-factor',
    '3',
    '--step-duration',
    '1.5s',
    '--refine',
    '0',
    '--no-metrics',
    '--json',
    out,
  ]);
  t.equal(run.code, 0, run.stderr);
  const { capacity, ...report } = readJson(out);
  const rates = capacity.steps.map((s: { rate: number }) => s.rate);
  t.same(rates.slice(0, 2), [30, 90], 'steps rise by the factor');
  t.ok(
    capacity.highestRate >= 30 && capacity.highestRate < CEILING,
    `highest rate held: ${capacity.highestRate}/s (< ${CEILING}/s)`,
  );
  for (const step of capacity.steps) {
    if (step.held)
      t.ok(step.latencyMs.p99 < 250 && step.errorRate < 0.001, `${step.rate}/s held with p99 ${step.latencyMs.p99} ms`);
  }
  const broken = capacity.steps.at(-1);
  t.notOk(broken.held, 'the search stopped at a step that broke');
  t.ok(broken.rate > capacity.highestRate, `${broken.rate}/s broke: ${broken.violations.join('; ')}`);
  t.match(broken.violations[0], /^p99 /);
  t.equal(report.rate, capacity.highestRate, 'the top-level figures are those of the highest rate that held');
  t.match(run.stdout, new RegExp(`highest rate that held ${capacity.highestRate}/s`));
});
