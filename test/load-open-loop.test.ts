// Coordinated omission: a server paused (SIGSTOP) for one second. The open loop counts each request's latency
// from its scheduled start, so every user who arrived during the pause waited and the p99 shows the second;
// the closed loop's few connections simply wait too, so only one request per connection sees it.
import t from 'tap';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJson, runLoadCli, startDelayServer, tempDir, type ChildServer } from './load-helpers.js';

const PAUSE_MS = 1000;

/** Pauses the server for PAUSE_MS, `afterMs` after its first request; resolves with the measured pause. */
async function pauseOnce(server: ChildServer, afterMs: number): Promise<number> {
  await server.firstRequest;
  await sleep(afterMs);
  const stopped = performance.now();
  process.kill(server.pid, 'SIGSTOP');
  // A timer may fire a fraction of a millisecond early against performance.now(): wait out the whole pause.
  while (performance.now() - stopped < PAUSE_MS) await sleep(PAUSE_MS + 1 - (performance.now() - stopped));
  process.kill(server.pid, 'SIGCONT');
  return performance.now() - stopped;
}

t.test('open loop: a one-second stall shows in the p99', async (t) => {
  // 20 ms per answer: the requests due within 20 ms of the stop (more than 1% of a 1.5 s run) wait it all.
  const server = await startDelayServer(t, 20);
  const out = join(tempDir(t), 'open.json');
  const [run, pause] = await Promise.all([
    runLoadCli([
      '--target',
      server.url,
      '--scenario',
      'gateway',
      '--paths',
      '/x',
      '--rate',
      '200/s',
      '--duration',
      '1.5s',
      '--no-metrics',
      '--json',
      out,
    ]),
    pauseOnce(server, 200),
  ]);
  t.equal(run.code, 0, run.stderr);
  const report = readJson(out);
  t.equal(report.mode, 'open');
  t.equal(report.requests.sent, 300, '200/s for 1.5 s');
  t.equal(report.requests.errors, 0);
  t.ok(pause >= PAUSE_MS, `paused ${pause.toFixed(0)} ms`);
  t.ok(report.latencyMs.p99 >= PAUSE_MS, `p99 ${report.latencyMs.p99} ms >= the ${PAUSE_MS} ms stall`);
  t.ok(
    report.series.some((p: { p99: number }) => p.p99 >= PAUSE_MS * 0.9),
    'the stalled second shows in the series',
  );
});

t.test('closed loop: the same stall is hidden from the p99', async (t) => {
  // 5 ms per answer: hundreds of requests per connection around the stall, one per connection in it.
  const server = await startDelayServer(t, 5);
  const out = join(tempDir(t), 'closed.json');
  const [run] = await Promise.all([
    runLoadCli([
      '--target',
      server.url,
      '--scenario',
      'gateway',
      '--paths',
      '/x',
      '--connections',
      '2',
      '--duration',
      '3s',
      '--no-metrics',
      '--json',
      out,
    ]),
    pauseOnce(server, 1000),
  ]);
  t.equal(run.code, 0, run.stderr);
  const report = readJson(out);
  t.equal(report.mode, 'closed');
  t.equal(report.driver, 'autocannon');
  t.ok(report.requests.ok > 200, `${report.requests.ok} requests`);
  t.ok(report.latencyMs.max >= PAUSE_MS * 0.9, `the stall is only in the max (${report.latencyMs.max} ms)`);
  t.ok(report.latencyMs.p99 < PAUSE_MS / 2, `p99 ${report.latencyMs.p99} ms hides it`);
});
