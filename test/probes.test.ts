// Probes that always answer: past the rate limit, a client gets 429, but a probe or scrape carrying OPERATOR_TOKEN
// is served (/, /health, /metrics, and HEAD of each); HEAD is answered wherever GET is; a production start with no
// token and no allowlist says in one line what probes and scrapes will meet.
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import t from 'tap';
import { startTestServer } from './helpers/server.js';

const TOKEN = 'probe-token-0123456789';
const bearer = { authorization: `Bearer ${TOKEN}` };

t.test('past the limit a client gets 429; requests with the operator token are exempt', async (t) => {
  const server = await startTestServer(t, { env: { RATE_LIMIT_MAX: '3', OPERATOR_TOKEN: TOKEN } });
  const status = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.url}${path}`, init);
    await res.arrayBuffer();
    return res.status;
  };
  t.same([await status('/'), await status('/'), await status('/')], [200, 200, 200], 'three requests in the window');
  t.equal(await status('/health'), 429, 'the fourth is refused');
  t.equal(await status('/', { method: 'HEAD' }), 429, 'HEAD counts like GET');
  t.equal(await status('/health', { headers: { authorization: 'Bearer wrong-token-0123456789' } }), 429);
  for (const path of ['/', '/health', '/metrics']) {
    t.equal(await status(path, { headers: bearer }), 200, `GET ${path} with the token: 200`);
    const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: bearer });
    t.equal(head.status, 200, `HEAD ${path} with the token: 200`);
    t.equal((await head.arrayBuffer()).byteLength, 0, `HEAD ${path}: no body`);
    t.ok(head.headers.get('content-type'), `HEAD ${path}: the GET's headers`);
  }
  t.equal(await status('/docs-json', { method: 'HEAD', headers: bearer }), 200, 'HEAD wherever GET is');
  t.equal(await status('/api/ussd', { method: 'HEAD', headers: bearer }), 404, 'but not where only POST is');
});

t.test('a production start without OPERATOR_TOKEN (or RATE_LIMIT_ALLOWLIST) says what probes will meet', async (t) => {
  const start = async (env: Record<string, string>) => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const env_ = { NODE_ENV: 'production', PIN_ENCRYPTION_KEY: randomBytes(32).toString('hex'), ...env };
    await (await startTestServer(t, { env: env_, log })).shutdown();
    return lines.filter((line) => line.includes('health probes'));
  };
  const warned = await start({ RATE_LIMIT_MAX: '100' });
  t.equal(warned.length, 1, 'one line');
  t.match(
    JSON.parse(warned[0]).msg,
    /^No OPERATOR_TOKEN and no RATE_LIMIT_ALLOWLIST: health probes \(GET \/ for liveness, \/health for readiness\) and metrics scrapes count against the rate limit .*100 requests per 60 s per address, then 429/,
  );
  t.same(await start({ OPERATOR_TOKEN: TOKEN }), [], 'not with a token');
});
