// The front door through HTTP: errors, request ids, CORS, body limit, rate limit, health, configuration.
import t from 'tap';
import { ConfigError, loadConfig } from '../dist/src/app/config.js';
import { sharedTestServer, startTestServer } from './helpers/server.js';

/** The default configuration, for the tests that only read from it. */
const plain = sharedTestServer(t);

t.test('unknown routes answer a JSON 404 with the request id echoed', async (t) => {
  const server = await plain();
  const res = await fetch(`${server.url}/nope?x=1`, { headers: { 'x-request-id': 'abc-123' } });
  t.equal(res.status, 404);
  t.equal(res.headers.get('x-request-id'), 'abc-123');
  t.same(await res.json(), { statusCode: 404, message: 'Cannot GET /nope', error: 'Not Found' });
  const generated = await fetch(`${server.url}/`);
  t.match(generated.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
});

t.test('GET / and GET /health carry the spec fields; /health really touches LMDB', async (t) => {
  const server = await startTestServer(t, { env: { NODE_ENV: 'test' } });
  const landing: any = await (await fetch(`${server.url}/`)).json();
  t.equal(landing.status, 'ok');
  t.equal(landing.environment, 'test');
  t.type(landing.message, 'string');
  t.ok(Date.parse(landing.timestamp));
  const res = await fetch(`${server.url}/health`);
  t.equal(res.status, 200);
  const health: any = await res.json();
  t.match(health, { status: 'ok', environment: 'test', database: 'connected' });
  t.type(health.uptime, 'number');
  t.ok(Date.parse(health.timestamp));

  // Probes at the same moment (a load balancer and an orchestrator) do not make each other fail.
  const together = await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(`${server.url}/health`).then(async (r) => [r.status, ((await r.json()) as { database: unknown }).database]),
    ),
  );
  t.same(
    together,
    Array.from({ length: 20 }, () => [200, 'connected']),
    'concurrent probes all answer 200 connected',
  );

  // Closing LMDB under the running server makes the probe fail: 503 and "disconnected".
  await server.store.close();
  const down = await fetch(`${server.url}/health`);
  t.equal(down.status, 503);
  t.match(await down.json(), { status: 'error', database: 'disconnected' });
});

t.test('CORS: wildcard by default, credentials for a configured origin, preflight 204', async (t) => {
  const open = await plain();
  const res = await fetch(`${open.url}/`);
  t.equal(res.headers.get('access-control-allow-origin'), '*');
  t.match(res.headers.get('access-control-expose-headers'), /X-Request-Id/);

  const strict = await startTestServer(t, { env: { CORS_ORIGIN: 'https://app.example' } });
  const allowed = await fetch(`${strict.url}/`, { headers: { origin: 'https://app.example' } });
  t.equal(allowed.headers.get('access-control-allow-origin'), 'https://app.example');
  t.equal(allowed.headers.get('access-control-allow-credentials'), 'true');
  const other = await fetch(`${strict.url}/`, { headers: { origin: 'https://evil.example' } });
  t.equal(other.headers.get('access-control-allow-origin'), null);

  const preflight = await fetch(`${open.url}/sessions`, {
    method: 'OPTIONS',
    headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' },
  });
  t.equal(preflight.status, 204);
  t.match(preflight.headers.get('access-control-allow-headers'), /x-ucan-delegation/);
  t.match(preflight.headers.get('access-control-allow-methods'), /PATCH/);
});

t.test('bodies over BODY_LIMIT_BYTES answer 413', async (t) => {
  const server = await startTestServer(t, { env: { BODY_LIMIT_BYTES: '2048' } });
  const res = await fetch(`${server.url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'x'.repeat(5000) }),
  });
  t.equal(res.status, 413);
  t.match(await res.json(), { statusCode: 413 });
});

t.test('rate limit: 429 with Retry-After; allow-list exempt; X-Forwarded-For only when trusted', async (t) => {
  const limited = await startTestServer(t, { env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_SECONDS: '60' } });
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await fetch(`${limited.url}/`)).status);
  t.same(statuses, [200, 200, 200, 429, 429]);
  const blocked = await fetch(`${limited.url}/health`);
  t.equal(blocked.status, 429, 'every route is limited');
  t.ok(Number(blocked.headers.get('retry-after')) >= 1);
  t.match(await blocked.json(), { statusCode: 429 });
  // Without TRUST_PROXY_ENABLED a forged X-Forwarded-For does not escape the limit.
  t.equal((await fetch(`${limited.url}/`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 429);

  const allow = await startTestServer(t, {
    env: { RATE_LIMIT_MAX: '2', RATE_LIMIT_ALLOWLIST: '10.0.0.0/8, 127.0.0.0/8' },
  });
  for (let i = 0; i < 5; i++) t.equal((await fetch(`${allow.url}/`)).status, 200, 'allow-listed loopback is exempt');

  const proxied = await startTestServer(t, { env: { RATE_LIMIT_MAX: '2', TRUST_PROXY_ENABLED: 'true' } });
  // The proxy (this test, on loopback) appends its client's address after whatever the client sent.
  const from = (ip: string) => fetch(`${proxied.url}/`, { headers: { 'x-forwarded-for': `10.0.0.1, ${ip}` } });
  t.same(
    [(await from('198.51.100.1')).status, (await from('198.51.100.1')).status, (await from('198.51.100.1')).status],
    [200, 200, 429],
  );
  t.equal((await from('198.51.100.2')).status, 200, 'another client behind the proxy has its own budget');

  // Socket.IO handshakes share the limit and answer it the same way (not Engine.IO's 403 {"code":4}).
  const socketIo = (transport: string) =>
    fetch(`${proxied.url}/socket.io/?EIO=4&transport=${transport}`, {
      headers: { 'x-forwarded-for': '198.51.100.3', origin: 'https://app.example' },
    });
  const opened = await socketIo('polling');
  t.equal(opened.status, 200, 'a polling handshake within the budget opens');
  t.match(await opened.text(), /^0\{"sid":/);
  await socketIo('polling');
  for (const transport of ['polling', 'websocket']) {
    const refused = await socketIo(transport);
    t.equal(refused.status, 429, `${transport} handshake over the limit`);
    t.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After');
    t.equal(
      refused.headers.get('access-control-allow-origin'),
      '*',
      'CORS headers, so a browser page can read the 429',
    );
    t.same(await refused.json(), {
      statusCode: 429,
      message: 'Too many requests, please try again later.',
      error: 'Too Many Requests',
    });
  }
});

t.test('configuration errors name the variable and the problem', async (t) => {
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      t.type(error, ConfigError);
      return (error as InstanceType<typeof ConfigError>).problems;
    }
  };
  t.match(problems({ PORT: 'abc' })[0], /^PORT="abc": must be a whole number/);
  t.match(problems({ PORT: '70000' })[0], /^PORT="70000": must be at most 65535/);
  t.match(problems({ LOG_LEVEL: 'loud' })[0], /^LOG_LEVEL="loud": must be one of/);
  t.match(problems({ TRUST_PROXY_ENABLED: 'maybe' })[0], /^TRUST_PROXY_ENABLED="maybe": must be true or false/);
  t.match(
    problems({ RATE_LIMIT_ALLOWLIST: '10.0.0.0/8,not-an-ip' })[0],
    /^RATE_LIMIT_ALLOWLIST=.*IP addresses or CIDRs/,
  );
  t.same(problems({}), [], 'defaults are valid');
  const defaults = loadConfig({});
  t.equal(defaults.PORT, 3000);
  t.equal(defaults.DATA_DIR, './data');
  t.equal(defaults.RATE_LIMIT_MAX, 100);
  t.equal(defaults.USSD_SESSION_TTL_SECONDS, 300);
});
