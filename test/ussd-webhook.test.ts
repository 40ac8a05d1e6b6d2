// The `http` action through HTTP against a real local backend: the call is made once per committed step (a
// gateway retry and a restart replay the stored outcome and do not call again), carries the session's values, an
// idempotency key and a secret from the environment; a backend that hangs, answers 500, text or 10 MB gives the
// service's error screen within the step's deadline, is counted in /metrics, and is never a 5xx to the gateway.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startChildServer } from './helpers/child-server.js';
import { scrape } from './helpers/metrics.js';
import { startTestServer } from './helpers/server.js';
import { json, serviceDir, startBackend, type Handler } from './helpers/ussd-backend.js';
import { dialShop, shopService, SORRY, TIMED_OUT } from './helpers/ussd-shop.js';

process.env.H41_TOKEN = 'secret-from-env';

const balance: Handler = (_req, res) => json(res, 200, { account: { balance: '42.50', holder: 'Amina' } });
const BALANCE_SCREEN = 'CON Balance 42.50 for Amina\n0. Back';

/** Handlers for every path of the shop (helpers/ussd-shop.ts). */
function handlers(): Record<string, Handler> {
  return {
    '/balance': balance,
    '/hang': () => {},
    '/500': (_req, res) => json(res, 500, { error: 'down' }),
    '/text': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>maintenance</html>');
    },
    '/big': (_req, res) => {
      // 10 MB of a JSON string, written as fast as the client takes it.
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(64 * 1024);
      res.write('{"account":{"balance":"');
      let left = 160;
      const more = () => {
        while (left > 0) {
          left--;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end('"}}');
      };
      more();
    },
  };
}

t.test('a gateway retry of a step with an http action replays its outcome: one call', async (t) => {
  const backend = await startBackend(t, handlers());
  const server = await startTestServer(t, { env: { USSD_SERVICES_DIR: serviceDir(t, shopService(backend.url)) } });
  const sessionId = `h41-retry-${process.pid}`;
  t.match((await dialShop(server.url, sessionId, '')).text, /^CON Shop\n1\. Balance/);
  const first = await dialShop(server.url, sessionId, '1');
  t.equal(first.text, BALANCE_SCREEN, "the answer's fields are saved and shown");
  const again = await dialShop(server.url, sessionId, '1');
  t.equal(again.text, BALANCE_SCREEN, 'the retry gets the same screen');
  t.equal(backend.callsTo('/balance').length, 1, 'the backend was called once');

  const [call] = backend.callsTo('/balance');
  t.equal(call!.headers.authorization, 'Bearer secret-from-env', 'the secret comes from the environment');
  t.equal(call!.headers['idempotency-key'], `${sessionId}:2`, 'keyed by session and step');
  t.match(call!.body, {
    service: 'shop',
    version: '1.0.0',
    state: 'balance',
    sessionId,
    phoneNumber: '+254700000041',
    language: 'en',
    step: 2,
    idempotencyKey: `${sessionId}:2`,
    values: { note: 'n1' },
  });
  // Back, and the same option again: a new step, a new call with its own key.
  await dialShop(server.url, sessionId, '1*0');
  t.equal((await dialShop(server.url, sessionId, '1*0*1')).text, BALANCE_SCREEN);
  t.same(
    backend.callsTo('/balance').map((c) => c.headers['idempotency-key']),
    [`${sessionId}:2`, `${sessionId}:4`],
  );
});

t.test('bad upstreams give the error screen within the deadline, counted, never a 5xx', async (t) => {
  const backend = await startBackend(t, handlers());
  const server = await startTestServer(t, { env: { USSD_SERVICES_DIR: serviceDir(t, shopService(backend.url)) } });
  const cases = [
    { option: '2', path: '/hang', screen: TIMED_OUT, reason: 'timeout' },
    { option: '3', path: '/500', screen: SORRY, reason: 'status' },
    { option: '4', path: '/text', screen: SORRY, reason: 'not_json' },
    { option: '5', path: '/big', screen: SORRY, reason: 'too_large' },
  ];
  for (const { option, path, screen, reason } of cases) {
    const sessionId = `h41-bad-${option}-${process.pid}`;
    await dialShop(server.url, sessionId, '');
    const answer = await dialShop(server.url, sessionId, option);
    t.equal(answer.status, 200, `${path}: 200 to the gateway`);
    t.equal(answer.text, screen, `${path}: the service's ${reason} branch`);
    // The default timeout is 2 s; the step deadline (USSD_STEP_TIMEOUT_MS) 15 s.
    t.ok(answer.ms < 2_600, `${path}: answered in ${Math.round(answer.ms)} ms`);
    t.equal(backend.callsTo(path).length, 1, `${path}: called once`);
  }
  // Host metrics reach the front door's registry once a second.
  const expected = { timeout: 1, status: 1, not_json: 1, too_large: 1 };
  let counted: Record<string, number> = {};
  for (const started = Date.now(); Date.now() - started < 5_000; ) {
    const metrics = await scrape(server.url);
    counted = Object.fromEntries(
      Object.keys(expected).map((reason) => [
        reason,
        metrics.value('ussd_webhook_calls_total', { service: 'shop', reason }),
      ]),
    );
    if (JSON.stringify(counted) === JSON.stringify(expected)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  t.same(counted, expected, 'each failure counted by its reason');
});

t.test('a restart replays a committed outcome without calling again', async (t) => {
  const backend = await startBackend(t, handlers());
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-h41-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { USSD_SERVICES_DIR: serviceDir(t, shopService(backend.url)) };
  const sessionId = `h41-restart-${process.pid}`;
  const first = await startTestServer(t, { env, dataDir, keepData: true });
  await dialShop(first.url, sessionId, '');
  t.equal((await dialShop(first.url, sessionId, '1')).text, BALANCE_SCREEN);
  await first.shutdown();
  const second = await startTestServer(t, { env, dataDir, keepData: true });
  t.equal((await dialShop(second.url, sessionId, '1')).text, BALANCE_SCREEN, 'the stored screen');
  t.equal(backend.callsTo('/balance').length, 1, 'no second call');
});

t.test('a node killed during the call calls again with the same key after its restart', async (t) => {
  let hold = true;
  const backend = await startBackend(t, {
    ...handlers(),
    // The first call is held until the node is dead; the next is answered.
    '/slow': (req, res) => (hold ? void (hold = false) : balance(req, res, undefined as never)),
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-h41-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    DATA_DIR: dataDir,
    USSD_SERVICES_DIR: serviceDir(t, shopService(backend.url)),
    H41_TOKEN: 'secret-from-env',
  };
  const sessionId = `h41-kill-${process.pid}`;
  const first = await startChildServer(t, env);
  await dialShop(first.url, sessionId, '');
  const answer = dialShop(first.url, sessionId, '6').catch((error: Error) => error);
  await backend.nextCall('/slow');
  first.child.kill('SIGKILL');
  await first.exited;
  t.type(await answer, Error, 'the gateway got no answer from the dead node');

  const second = await startChildServer(t, env);
  const retried = await dialShop(second.url, sessionId, '6');
  t.equal(retried.text, BALANCE_SCREEN, 'the retry is answered from the second call');
  const keys = backend.callsTo('/slow').map((call) => call.headers['idempotency-key']);
  t.same(keys, [`${sessionId}:2`, `${sessionId}:2`], 'called again, with the same key');
  t.equal((await dialShop(second.url, sessionId, '6')).text, BALANCE_SCREEN);
  t.equal(backend.callsTo('/slow').length, 2, 'and not again once committed');
});
