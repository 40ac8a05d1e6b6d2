// The `notify` action's outbox through HTTP against a real local SMS service: a notification is committed with its
// step and delivered after the answer, once (a gateway retry of the step queues nothing more), with backoff past
// refusals, given up after its attempts, and delivered after a kill -9 that came between the commit and delivery.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startChildServer } from './helpers/child-server.js';
import { scrape } from './helpers/metrics.js';
import { startTestServer } from './helpers/server.js';
import { freePort, json, serviceDir, startBackend, type Handler } from './helpers/ussd-backend.js';
import { dialShop, shopService } from './helpers/ussd-shop.js';
import { englishServiceHead } from './helpers/ussd-services.js';

process.env.H41_TOKEN = 'sms-key';
const SENT = 'END We will send you an SMS.';

/** Waits until the node's /metrics shows `expected` (host metrics reach it once a second). */
async function metricsReach(url: string, expected: Record<string, number>): Promise<Record<string, number>> {
  let seen: Record<string, number> = {};
  for (const started = Date.now(); Date.now() - started < 10_000; ) {
    const metrics = await scrape(url);
    seen = Object.fromEntries(Object.keys(expected).map((name) => [name, metrics.value(name)]));
    if (JSON.stringify(seen) === JSON.stringify(expected)) return seen;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return seen;
}

t.test('a notification is delivered once after the answer, past refusals', async (t) => {
  let refusals = 2;
  const accept: Handler = (_req, res) => (refusals-- > 0 ? json(res, 503, { busy: true }) : json(res, 202, {}));
  const balance: Handler = (_req, res) => json(res, 200, { account: { balance: '1', holder: 'A' } });
  const sms = await startBackend(t, { '/sms': accept, '/balance': balance });
  const server = await startTestServer(t, {
    env: { USSD_SERVICES_DIR: serviceDir(t, shopService(sms.url)), USSD_OUTBOX_BACKOFF_MS: '50' },
  });
  const sessionId = `h41-sms-${process.pid}`;
  await dialShop(server.url, sessionId, '');
  await dialShop(server.url, sessionId, '1');
  await dialShop(server.url, sessionId, '1*0');
  t.equal((await dialShop(server.url, sessionId, '1*0*7')).text, SENT);
  t.equal((await dialShop(server.url, sessionId, '1*0*7')).text, SENT, 'a gateway retry');
  const delivered = await sms.nextCall('/sms', 2);
  t.equal(delivered.headers['idempotency-key'], `${sessionId}:4:1`, 'keyed by session, step and number');
  t.equal(delivered.headers['x-api-key'], 'sms-key', 'the key from the environment');
  t.match(delivered.body, { service: 'shop', state: 'sms', sessionId, phoneNumber: '+254700000041', step: 4 });
  t.same(delivered.body.values, { note: 'n1' }, 'the values it names');
  t.same(
    await metricsReach(server.url, {
      ussd_outbox_delivered_total: 1,
      ussd_outbox_pending: 0,
      ussd_outbox_given_up_total: 0,
    }),
    { ussd_outbox_delivered_total: 1, ussd_outbox_pending: 0, ussd_outbox_given_up_total: 0 },
  );
  t.equal(sms.callsTo('/sms').length, 3, 'two refusals and one acceptance: no more');
});

t.test('a notification nobody accepts is given up after its attempts', async (t) => {
  const sms = await startBackend(t, { '/sms': (_req, res) => json(res, 500, {}) });
  const server = await startTestServer(t, {
    env: {
      USSD_SERVICES_DIR: serviceDir(t, shopService(sms.url, sms.url, { attempts: 2 })),
      USSD_OUTBOX_BACKOFF_MS: '20',
    },
  });
  const sessionId = `h41-giveup-${process.pid}`;
  await dialShop(server.url, sessionId, '');
  t.equal((await dialShop(server.url, sessionId, '7')).text, SENT);
  t.same(await metricsReach(server.url, { ussd_outbox_given_up_total: 1, ussd_outbox_pending: 0 }), {
    ussd_outbox_given_up_total: 1,
    ussd_outbox_pending: 0,
  });
  t.equal(sms.callsTo('/sms').length, 2, 'tried twice');
});

t.test('kill -9 between the commit and the delivery: delivered once after the restart', async (t) => {
  const port = await freePort(); // the SMS service is down until the node has died
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-h41-outbox-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const sessionId = `h41-kill-sms-${process.pid}`;
  const env = {
    DATA_DIR: dataDir,
    USSD_SERVICES_DIR: serviceDir(t, shopService('http://127.0.0.1:1', `http://127.0.0.1:${port}`)),
    H41_TOKEN: 'sms-key',
    // A failed delivery waits a minute: only the restart can deliver within the test.
    USSD_OUTBOX_BACKOFF_MS: '60000',
  };
  const first = await startChildServer(t, env);
  await dialShop(first.url, sessionId, '');
  t.equal((await dialShop(first.url, sessionId, '7')).text, SENT, 'the step is committed and answered');
  first.child.kill('SIGKILL');
  await first.exited;

  const sms = await startBackend(t, { '/sms': (_req, res) => json(res, 200, { queued: true }) }, port);
  const second = await startChildServer(t, env);
  const delivered = await sms.nextCall('/sms');
  t.equal(delivered.headers['idempotency-key'], `${sessionId}:2:1`);
  t.same(await metricsReach(second.url, { ussd_outbox_delivered_total: 1, ussd_outbox_pending: 0 }), {
    ussd_outbox_delivered_total: 1,
    ussd_outbox_pending: 0,
  });
  t.equal(sms.callsTo('/sms').length, 1, 'delivered once');
});

t.test('a session id dialled again after it expired: its steps go on, no notification is dropped', async (t) => {
  let open = false;
  const sms = await startBackend(t, { '/sms': (_req, res) => json(res, open ? 202 : 503, {}) });
  const service = `${englishServiceHead('remind', '*501#', 'menu')}states:
  menu:
    type: menu
    text: Remind
    options:
      - { key: '1', text: SMS me, next: sms }
  sms:
    type: action
    action: notify
    request: { url: '${sms.url}/sms' }
    outcomes:
      queued: { next: menu }
`;
  const server = await startTestServer(t, {
    env: { USSD_SERVICES_DIR: serviceDir(t, service), USSD_OUTBOX_BACKOFF_MS: '200', USSD_SESSION_TTL_SECONDS: '1' },
  });
  const sessionId = `h41-reuse-${process.pid}`;
  const dial = async (text: string) => {
    const body = { sessionId, serviceCode: '*501#', phoneNumber: '+254700000042', text };
    const res = await fetch(`${server.url}/api/ussd`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.text();
  };
  t.equal(await dial(''), 'CON Remind\n1. SMS me');
  t.equal(await dial('1'), 'CON Remind\n1. SMS me', 'the notification is committed; the session goes on');
  await sms.nextCall('/sms');
  // Refused once, so still pending; the session is left idle past its TTL (a clock, not an event: 1 s).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(await dial(''), 'CON Remind\n1. SMS me', 'the same id dialled again: a new session');
  t.equal(await dial('1'), 'CON Remind\n1. SMS me');
  open = true;
  const from = sms.callsTo('/sms').length;
  const keys = [`${sessionId}:2:1`, `${sessionId}:4:1`];
  const accepted = async () => {
    const seen = () => [
      ...sms
        .callsTo('/sms')
        .slice(from)
        .map((call) => String(call.headers['idempotency-key'])),
    ];
    // Each call is awaited; past 15 s without both, what came is the answer.
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, 15_000).unref());
    while (!keys.every((key) => seen().includes(key))) {
      const next = sms.nextCall('/sms', sms.callsTo('/sms').length);
      if ((await Promise.race([next.then(() => true), deadline.then(() => false)])) === false) break;
    }
    return seen().sort();
  };
  t.same(await accepted(), keys, 'both accepted once, each under its own key: the new session numbers on (dial = 3)');
  const steps = sms
    .callsTo('/sms')
    .slice(from)
    .map((call) => (call.body as { step: number }).step);
  t.same(steps.sort(), [2, 4], "each notification's step, accepted once");
});
