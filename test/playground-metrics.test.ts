// The dashboard's arithmetic (web/playground/src/metrics.ts) on real prom-client output: parsing the text,
// request rates and latency percentiles from histogram buckets, and leaving the dashboard's own polls out.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import t from 'tap';
import { figuresBetween, parsePrometheusText, quantile, reduceScrape } from '../web/playground/src/metrics.ts';

function makeRegistry() {
  const registry = new Registry();
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'requests',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'latency',
    labelNames: ['route'],
    buckets: [0.001, 0.01, 0.1, 1],
    registers: [registry],
  });
  const observe = (route: string, seconds: number) => {
    requests.inc({ route, method: 'GET', status: '200' });
    duration.observe({ route }, seconds);
  };
  const actors = new Gauge({ name: 'actors_active', help: 'actors', labelNames: ['kind'], registers: [registry] });
  const sockets = new Gauge({
    name: 'ws_connections_active',
    help: 'sockets',
    labelNames: ['transport'],
    registers: [registry],
  });
  return { registry, observe, actors, sockets };
}

t.test('parses labels with escapes and the special values', async (t) => {
  const samples = parsePrometheusText(
    '# HELP x help\n# TYPE x gauge\nx{a="q\\"uote",b="back\\\\slash",c="line\\nbreak"} 3\nx_bucket{le="+Inf"} +Inf\nup 1 1700000000000\n',
  );
  t.same(samples, [
    { name: 'x', labels: { a: 'q"uote', b: 'back\\slash', c: 'line\nbreak' }, value: 3 },
    { name: 'x_bucket', labels: { le: '+Inf' }, value: Infinity },
    { name: 'up', labels: {}, value: 1 },
  ]);
});

t.test('rate and percentiles between two scrapes of a real registry, without the /metrics route', async (t) => {
  const { registry, observe } = makeRegistry();
  observe('/api/ussd', 0.005);
  observe('/metrics', 0.5);
  const before = reduceScrape(parsePrometheusText(await registry.metrics()), 1_000);
  for (let i = 0; i < 90; i++) observe('/api/ussd', 0.005); // 90 in (0.001, 0.01]
  for (let i = 0; i < 10; i++) observe('/sessions', 0.05); // 10 in (0.01, 0.1]
  for (let i = 0; i < 50; i++) observe('/metrics', 0.5); // the dashboard's own polls
  const after = reduceScrape(parsePrometheusText(await registry.metrics()), 3_000);

  const figures = figuresBetween(before, after);
  t.equal(figures.requestsPerSecond, 50, '100 requests in 2 s; the /metrics polls not counted');
  // p50: rank 50 of 90 in (0.001, 0.01] -> 0.001 + 0.009 * 50/90
  t.ok(Math.abs(figures.p50! - (0.001 + (0.009 * 50) / 90)) < 1e-12, `p50 ${figures.p50}`);
  // p95: rank 95, 5 into the 10 of (0.01, 0.1] -> 0.055
  t.ok(Math.abs(figures.p95! - 0.055) < 1e-12, `p95 ${figures.p95}`);
  t.ok(figures.p99! > figures.p95! && figures.p99! <= 0.1, `p99 ${figures.p99}`);
});

t.test('gauges are totals over their labels', async (t) => {
  const { registry, actors, sockets } = makeRegistry();
  actors.set({ kind: 'ussd' }, 3);
  actors.set({ kind: 'oracle-chat' }, 2);
  sockets.set({ transport: 'websocket' }, 4);
  sockets.set({ transport: 'socket.io' }, 1);
  t.match(reduceScrape(parsePrometheusText(await registry.metrics()), 0), {
    actors: 5,
    sockets: 5,
    ussdSessions: 0,
    mailboxDepth: 0,
  });
});

t.test('no request in between: no percentile; a counter reset starts over', async (t) => {
  const { registry, observe } = makeRegistry();
  observe('/health', 2); // past the last finite bound
  const a = reduceScrape(parsePrometheusText(await registry.metrics()), 0);
  t.same(figuresBetween(a, { ...a, at: 1_000 }), { requestsPerSecond: 0, p50: null, p95: null, p99: null });
  t.equal(quantile(0.5, new Map(), a.buckets), 1, 'slower than every bound answers the last bound');
  const restarted = { ...a, at: 1_000, requests: 0, buckets: new Map([[Infinity, 0]]) };
  t.equal(figuresBetween(a, restarted).requestsPerSecond, 0);
});
