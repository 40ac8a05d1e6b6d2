// bench/lib/load.ts: a run of a fixed number of requests is timed to its last response, not to autocannon's
// next one-second sample (which read 10,000 cold verifications in ~3 s as 2,500/s).
import t from 'tap';
import { measure } from '../dist/bench/lib/load.js';
import { startNode, withProcess } from '../dist/bench/lib/process.js';

t.test('a fixed amount is timed from the start to its last response', async (t) => {
  const measured = await withProcess(startNode('dist/bench/baselines/bare-uws.js'), (bare) =>
    measure(bare, { amount: 300, connections: 4 }),
  );
  t.equal(measured.count, 300);
  t.equal(measured.errors, 0);
  const seconds = (measured.window!.endUs - measured.window!.startUs) / 1e6;
  // 300 GETs on a bare route take milliseconds; autocannon's own duration would be a whole second or more.
  t.ok(seconds > 0 && seconds < 0.9, `window ${seconds} s`);
  t.equal(measured.throughput, 300 / seconds);
});
