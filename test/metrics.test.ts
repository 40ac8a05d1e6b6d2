// GET /metrics: a valid Prometheus exposition (promtool and a parser agree), counters that move by exactly the
// requests sent, metrics the actor hosts report from their threads, the guard, and the switches.
import { connect } from 'node:net';
import t from 'tap';
import { eventually } from './helpers/oracle.js';
import { promtoolCheck, scrape, type Scrape } from './helpers/metrics.js';
import { startTestServer } from './helpers/server.js';
import { GatewaySession, postUssd } from './helpers/ussd-gateway.js';

const REMOTE = { 'x-forwarded-for': '203.0.113.7' };
const TOKEN = 'op-secret';
const OPERATOR = { authorization: `Bearer ${TOKEN}` };

/** Scrapes until the actor hosts' report shows `ready` (they report once a second). */
const settled = (url: string, ready: (s: Scrape) => boolean) =>
  eventually(
    async () => {
      const s = await scrape(url, OPERATOR);
      return ready(s) ? s : undefined;
    },
    'an actor host report',
    200,
  );

t.test('the exposition parses, and its counters move by exactly the requests sent', async (t) => {
  // Loopback is exempt from the rate limit; a "remote" client (X-Forwarded-For from the trusted loopback proxy)
  // gets 3 requests per window. Behind a trusted proxy /metrics needs the operator token.
  const server = await startTestServer(t, {
    env: {
      TRUST_PROXY_ENABLED: 'true',
      OPERATOR_TOKEN: TOKEN,
      RATE_LIMIT_MAX: '3',
      RATE_LIMIT_ALLOWLIST: '127.0.0.1,::1',
    },
  });
  t.equal((await fetch(`${server.url}/metrics`)).status, 401, 'no token');
  t.equal(
    (await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status,
    401,
    'wrong token',
  );
  const doc: any = await (await fetch(`${server.url}/docs-json`)).json();
  t.same(doc.paths['/metrics'].get.security, [{ operatorToken: [] }], 'documented as an operator route');
  const before = await scrape(server.url, OPERATOR);

  const check = promtoolCheck(before.text);
  t.equal(check.status, 0, 'promtool check metrics passes, its linter included');
  t.same(check.problems, []);
  t.notMatch(before.text, /^nodejs_active_\w+_total/m, 'no gauge is named like a counter');
  t.match(before.text, /^nodejs_active_handles\{type="\w+"\} \d+/m, 'the counts stay, by type');
  for (const name of [
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_seconds',
    'actor_mailbox_depth',
  ]) {
    t.ok(before.types.has(name), `${name} is exported`);
  }
  const engine = server.http.engine;
  t.equal(
    before.value('http_engine_info', { engine: engine.name, build: engine.name === 'uws' ? engine.build : 'none' }),
    1,
    `the engine serving: ${engine.name}`,
  );

  // A USSD session: a dial and 3 inputs (CON each), the last input again (a gateway retry), one malformed request.
  const session = new GatewaySession(server.url, 'metrics-1');
  for (const input of [undefined, '1', '1', '0']) t.match(await session.send(input), /^CON /);
  t.match(await session.resend(), /^CON /);
  t.match((await postUssd(server.url, { sessionId: 'x' })).body, /^END Invalid input/);

  const GATEWAY_GETS = 4;
  for (let i = 0; i < GATEWAY_GETS; i++) t.equal((await fetch(`${server.url}/ixo/entity/params`)).status, 200);

  // The remote client: 3 requests allowed, then 2 refused.
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await fetch(`${server.url}/`, { headers: REMOTE })).status);
  t.same(statuses, [200, 200, 200, 429, 429]);

  const after = await settled(server.url, (s) => s.value('ussd_steps_total') - before.value('ussd_steps_total') >= 6);
  const delta = (name: string, labels: Record<string, string> = {}) =>
    after.value(name, labels) - before.value(name, labels);
  const countDelta = (name: string, labels: Record<string, string> = {}) =>
    after.count(name, labels) - before.count(name, labels);

  t.equal(delta('http_requests_total', { route: '/api/ussd', method: 'POST', status: '200' }), 6);
  t.equal(countDelta('http_request_duration_seconds', { route: '/api/ussd', method: 'POST' }), 6);
  t.equal(delta('ussd_steps_total', { outcome: 'continue' }), 4);
  t.equal(delta('ussd_steps_total', { outcome: 'retry' }), 1);
  t.equal(delta('ussd_steps_total', { outcome: 'invalid_request' }), 1);
  t.equal(delta('ussd_steps_total'), 6, 'no other outcome moved');
  t.equal(after.value('ussd_sessions_active'), 1);

  t.equal(
    delta('http_requests_total', { route: '/ixo/*', method: 'GET', status: '200' }),
    GATEWAY_GETS,
    'gateway GETs by their declared pattern',
  );
  t.equal(
    countDelta('gateway_upstream_duration_seconds', {
      service: 'ixo.entity.v1beta1.Query',
      method: 'Params',
      code: 'OK',
    }),
    GATEWAY_GETS,
  );

  t.equal(delta('rate_limited_total'), 2);
  t.equal(delta('http_requests_total', { route: '/', status: '429' }), 2);
  t.equal(delta('http_requests_total', { route: '/', status: '200' }), 3);

  // Reported by the actor host from its thread.
  t.equal(after.value('actors_active', { kind: 'ussd' }), 1, 'one USSD actor in memory');
  t.equal(countDelta('store_commit_duration_seconds') > 0, true, 'the session commits were timed on the host');
  t.equal(after.value('actor_mailbox_depth', { host: '0' }), 0, 'nothing waits in the mailboxes');

  // /metrics never sees raw paths: an unknown path counts under the catch-all pattern.
  await fetch(`${server.url}/no/such/path-${Date.now()}`);
  const last = await scrape(server.url, OPERATOR);
  t.notOk(last.text.includes('/no/such/path'), 'no raw path in the labels');
  t.equal(
    last.value('http_requests_total', { route: '/*', status: '404' }) -
      after.value('http_requests_total', { route: '/*', status: '404' }),
    1,
  );

  // A host that dies: counted once restarted; its actors are gone and its successor reports from scratch.
  await server.runtime.terminateHost(0);
  await eventually(() => server.runtime.isHostAlive(0), 'the host to restart');
  // Its first USSD message (a gateway retry) seeds its live sessions from LMDB.
  t.match(await session.resend(), /^CON /);
  const restarted = await settled(
    server.url,
    (s) =>
      s.value('ussd_sessions_active') === 1 &&
      s.value('ussd_steps_total', { outcome: 'retry' }) > after.value('ussd_steps_total', { outcome: 'retry' }),
  );
  t.equal(
    restarted.value('actor_host_restarts_total', { host: '0' }) -
      before.value('actor_host_restarts_total', { host: '0' }),
    1,
  );
  t.equal(restarted.value('actors_active', { kind: 'ussd' }), 1, 'the new host holds the one actor it was sent');
});

// Without OPERATOR_TOKEN and without a proxy, loopback callers are served: test/metrics-oracle.test.ts scrapes so.
t.test('a request abandoned before its answer counts as 499; an answered one does not', async (t) => {
  const server = await startTestServer(t);
  const ussd = { route: '/api/ussd', method: 'POST' };
  const before = await scrape(server.url);
  // Headers promise 100 bytes of body, 10 arrive, then the client goes away: the handler never ran.
  const port = Number(new URL(server.url).port);
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    'POST /api/ussd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"session',
  );
  socket.destroy();
  await new Promise((resolve) => socket.once('close', resolve));
  const abandoned = await eventually(async () => {
    const s = await scrape(server.url);
    return s.value('http_requests_total', { ...ussd, status: '499' }) -
      before.value('http_requests_total', { ...ussd, status: '499' }) ===
      1
      ? s
      : undefined;
  }, 'the abandoned request to be counted');
  t.pass('counted once as 499');
  t.equal(
    abandoned.count('http_request_duration_seconds', ussd) - before.count('http_request_duration_seconds', ussd),
    1,
    'and timed',
  );

  t.match((await postUssd(server.url, { sessionId: 'x' })).body, /^END Invalid input/);
  const answered = await scrape(server.url);
  t.equal(
    answered.value('http_requests_total', { ...ussd, status: '200' }) -
      abandoned.value('http_requests_total', { ...ussd, status: '200' }),
    1,
  );
  t.equal(
    answered.value('http_requests_total', { ...ussd, status: '499' }),
    abandoned.value('http_requests_total', { ...ussd, status: '499' }),
    'no 499 for it',
  );
});

t.test(
  'guard: behind a trusted proxy without OPERATOR_TOKEN nobody is served; METRICS_PUBLIC serves anyone',
  async (t) => {
    const proxied = await startTestServer(t, { env: { TRUST_PROXY_ENABLED: 'true' } });
    t.equal((await fetch(`${proxied.url}/metrics`, { headers: REMOTE })).status, 403, 'a remote caller');
    t.equal((await fetch(`${proxied.url}/metrics`)).status, 403, 'the proxy itself (loopback)');

    const open = await startTestServer(t, { env: { TRUST_PROXY_ENABLED: 'true', METRICS_PUBLIC: 'true' } });
    const ok = await fetch(`${open.url}/metrics`, { headers: REMOTE });
    t.equal(ok.status, 200, 'public: a remote caller is served');
    t.match(ok.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    await ok.text();
    const doc: any = await (await fetch(`${open.url}/docs-json`)).json();
    t.same(doc.paths['/metrics'].get.security, [], 'documented as public');
  },
);

t.test('METRICS_ENABLED=false: no /metrics route', async (t) => {
  const server = await startTestServer(t, { env: { METRICS_ENABLED: 'false' } });
  t.equal((await fetch(`${server.url}/metrics`)).status, 404);
});
