// Each scenario against the real server (in this process), with tiny counts: every request succeeds and the
// figures show the journeys a real user makes (USSD steps, chat frames and timings, WebSocket events).
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import { startOracleServer, type OracleServer } from './helpers/oracle.js';
import { readJson, runLoadInProcess as runLoad, tempDir } from './load-helpers.js';

let server: OracleServer;
t.before(async () => {
  server = await startOracleServer(t);
});

async function load(t: Test, args: string[]) {
  const out = join(tempDir(t), 'report.json');
  const run = await runLoad([
    '--target',
    server.url,
    '--duration',
    '0.5s',
    '--think',
    '10ms',
    '--no-metrics',
    '--json',
    out,
    ...args,
  ]);
  t.equal(run.code, 0, run.stdout);
  const report = readJson(out);
  t.equal(report.requests.errors, 0, JSON.stringify(report.errorsByKind));
  t.equal(report.requests.ok, report.requests.sent);
  return report;
}

t.test('ussd: each caller dials and walks the menu path', async (t) => {
  const report = await load(t, ['--scenario', 'ussd', '--rate', '4/s', '--ussd-path', '1,2,0,00,2']);
  t.equal(report.counts['ussd journeys ok'], 2);
  t.equal(report.counts['ussd steps'], 2 * 6, 'the dial and 5 inputs each');
  t.equal(report.requests.ok, 12);
});

t.test('ussd: a path that meets END too early is an error', async (t) => {
  const out = join(tempDir(t), 'report.json');
  const run = await runLoad([
    '--target',
    server.url,
    '--scenario',
    'ussd',
    '--rate',
    '4/s',
    '--duration',
    '0.5s',
    '--think',
    '0',
    '--ussd-path',
    '*,1',
    '--no-metrics',
    '--json',
    out,
  ]);
  t.equal(run.code, 0);
  const report = readJson(out);
  t.same(report.errorsByKind, { 'ussd END before the path ended': 2 });
  t.equal(report.counts['ussd journeys failed'], 2);
});

t.test('chat: create a session, stream a message to done', async (t) => {
  const report = await load(t, [
    '--scenario',
    'chat',
    '--rate',
    '6/s',
    '--oracle-did',
    server.oracleDid,
    '--users',
    '2',
    '--turns',
    '2',
  ]);
  t.equal(report.counts['chat journeys ok'], 3);
  t.equal(report.counts['chat turns'], 6);
  t.equal(report.requests.ok, 3 + 6, 'a session and two streamed messages each');
  t.equal(report.timings['chat first frame'].count, 6);
  t.equal(report.timings['chat done'].count, 6);
  t.ok(report.timings['chat done'].p50 >= report.timings['chat first frame'].p50);
  t.ok(report.counts['chat frames'] >= 6 * 3, 'frames up to done');
});

t.test('chat: UCANs for another oracle are refused (401), counted by kind', async (t) => {
  const out = join(tempDir(t), 'report.json');
  const other = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
  const run = await runLoad([
    '--target',
    server.url,
    '--scenario',
    'chat',
    '--rate',
    '4/s',
    '--duration',
    '0.5s',
    '--oracle-did',
    other,
    '--no-metrics',
    '--json',
    out,
  ]);
  t.equal(run.code, 0);
  t.same(readJson(out).errorsByKind, { 'http 401': 2 });
});

t.test('ws: clients hold a socket, ping it and count the events of a chat turn', async (t) => {
  const report = await load(t, [
    '--scenario',
    'ws',
    '--rate',
    '4/s',
    '--oracle-did',
    server.oracleDid,
    '--ws-hold',
    '600ms',
    '--ws-ping',
    '200ms',
  ]);
  t.equal(report.counts['ws connections'], 2);
  t.equal(report.counts['ws event connected'], 2);
  t.ok(report.counts['ws event pong'] >= 2 * 2, `${report.counts['ws event pong']} pongs`);
  t.equal(report.counts['ws event message_cache_invalidation'], 2, 'the turn sent while holding reached each socket');
  t.ok(report.counts['ws event router_update'] >= 2);
});

t.test('gateway: GETs of the listed paths, open loop and closed loop (autocannon)', async (t) => {
  const open = await load(t, [
    '--scenario',
    'gateway',
    '--rate',
    '40/s',
    '--paths',
    '/ixo/token/params,/ixo/entity/params',
  ]);
  t.equal(open.requests.ok, 20);
  const closed = await load(t, ['--scenario', 'gateway', '--connections', '2', '--duration', '0.3s']);
  t.equal(closed.driver, 'autocannon');
  t.ok(closed.requests.ok > 10, `${closed.requests.ok} requests`);
});

t.test('mix: journeys of every scenario by weight', async (t) => {
  const report = await load(t, [
    '--scenario',
    'mix',
    '--mix',
    'ussd=1,chat=1,gateway=1',
    // 30 journeys (0.5 s at 60/s), each scenario drawn at random by weight: one missing from all of them has a
    // chance of 3 x (2/3)^30, about 1 in 60,000 (with 15 journeys it was 1 in 150, and it happened).
    '--rate',
    '60/s',
    '--oracle-did',
    server.oracleDid,
  ]);
  const journeys = ['ussd', 'chat', 'gateway'].map((name) => report.counts[`${name} journeys ok`] ?? 0);
  t.equal(
    journeys.reduce((a, b) => a + b),
    30,
  );
  t.ok(
    journeys.every((n) => n > 0),
    `ussd, chat, gateway: ${journeys.join(', ')}`,
  );
});
