// The USSD gateway through HTTP, as a telecom gateway and an operator use it.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { startChildServer } from './helpers/child-server.js';
import { eventually } from './helpers/oracle.js';
import { sharedTestServer, startTestServer } from './helpers/server.js';
import { GatewaySession, postUssd } from './helpers/ussd-gateway.js';

const INVALID = 'END Invalid input. Please try again.';
const UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';
const valid = { sessionId: 'v-1', serviceCode: '*123#', phoneNumber: '+254700000001', text: '' };
/**
 * The tests that need no fresh server share one (each has its own session ids and accounts); PIN_LOCK_MINUTES is
 * set (to its default) for the lock test, which names it, and touches no other test.
 */
const plain = sharedTestServer(t, { env: { PIN_LOCK_MINUTES: '30' } });

/** Every screen a session saw is a CON/END answer within the USSD limit. */
function checkScreens(t: Test, session: GatewaySession) {
  for (const screen of session.screens) {
    t.match(screen, /^(CON|END) /, 'answer starts with CON or END');
    t.ok(screen.length <= 182, `screen of ${screen.length} characters fits in 182`);
  }
}

async function createAccount(url: string, sessionId: string, pin = '48207') {
  const s = new GatewaySession(url, sessionId);
  await s.send();
  await s.send('2'); // Account Menu
  await s.send('2'); // Create account
  await s.send('Amina Wanjiru');
  await s.send('00'); // skip email
  await s.send(pin);
  const done = await s.send(pin);
  const customerId = /C[0-9A-F]{8}/.exec(done)?.[0];
  return { session: s, done, customerId: customerId! };
}

t.test(
  'validation: every bad field, malformed bodies and wrong content types answer END Invalid input (HTTP 200 text/plain)',
  async (t) => {
    const { url } = await plain();
    const cases: unknown[] = [
      { ...valid, phoneNumber: '0700000001' },
      { ...valid, phoneNumber: '+0700000001' },
      { ...valid, phoneNumber: '+123456' },
      { ...valid, phoneNumber: '+1234567890123456' },
      { ...valid, serviceCode: '123#' },
      { ...valid, serviceCode: '*123' },
      { ...valid, serviceCode: '*12a#' },
      { ...valid, text: '1'.repeat(183) },
      { ...valid, sessionId: 's'.repeat(101) },
      { ...valid, sessionId: '' },
      { ...valid, text: 'a\u0000b' },
      { ...valid, text: 5 },
      { serviceCode: '*123#', phoneNumber: '+254700000001', text: '' },
      [],
    ];
    for (const body of cases) {
      const answer = await postUssd(url, body as Record<string, unknown>);
      t.same(
        answer,
        { status: 200, contentType: 'text/plain; charset=utf-8', body: INVALID },
        JSON.stringify(body).slice(0, 60),
      );
    }
    for (const [body, type] of [
      ['{not json', 'application/json'],
      ['<xml/>', 'application/xml'],
      ['', 'application/json'],
    ]) {
      const res = await fetch(`${url}/api/ussd`, { method: 'POST', headers: { 'content-type': type }, body });
      t.equal(res.status, 200);
      t.equal(await res.text(), INVALID, `${type} ${body}`);
    }
    // Limits are inclusive: 182 characters of text and 100 of session id are fine.
    const longest = await postUssd(url, { ...valid, sessionId: 's'.repeat(100), text: '' });
    t.match(longest.body, /^CON Welcome/);
  },
);

t.test("form-encoded requests as Africa's Talking sends them, with networkCode", async (t) => {
  const { url } = await plain();
  const s = new GatewaySession(url, 'at-form-1', '+254711000111', '*384*55#', true);
  t.match(await s.send(), /^CON Welcome/);
  t.match(await s.send('1'), /^CON Know More/);
  const res = await postUssd(
    url,
    { sessionId: 'at-form-2', serviceCode: '*384*55#', phoneNumber: '+254711000111', networkCode: '63902', text: '' },
    true,
  );
  t.match(res.body, /^CON Welcome/);
  checkScreens(t, s);
});

t.test('menus: welcome, Know More screens, back, home and exit with END', async (t) => {
  const { url } = await plain();
  const s = new GatewaySession(url, 'menu-1');
  const welcome = await s.send();
  t.match(welcome, /^CON /);
  t.match(welcome, /1\. Know More/);
  t.match(welcome, /2\. Account Menu/);
  t.match(welcome, /\*\. Exit/);
  const info = await s.send('1');
  for (const entry of ['About this service', 'Pricing', 'Delivery', 'Exit']) t.match(info, entry);
  t.match(await s.send('1'), /^CON About this service/);
  t.match(await s.send('0'), /^CON Know More/, '0 goes back');
  t.match(await s.send('2'), /^CON Pricing/);
  t.match(await s.send('00'), /^CON Welcome/, '00 goes home');
  t.match(await s.send('9'), /^CON Invalid choice\.\nWelcome/, 'an invalid choice re-shows the menu with a notice');
  t.match(await s.send('1'), /^CON Know More/);
  t.match(await s.send('3'), /^CON Delivery/);
  t.match(await s.send('0'), /^CON Know More/);
  t.match(await s.send('*'), /^END .*Goodbye/, '* exits with END where Exit is offered');
  checkScreens(t, s);

  // `*` is Exit only where the screen offers it: on the name prompt it is just (invalid) text.
  const other = new GatewaySession(url, 'menu-2');
  await other.send();
  await other.send('2');
  await other.send('2');
  t.match(await other.send('*'), /^CON /, 'no END on a screen without Exit');
  t.match(await other.send('Grace Njeri'), /^CON .*email/i, 'the earlier * was not read as Exit later');
  checkScreens(t, other);
});

t.test('gateway retries get the same screen and are not applied twice', async (t) => {
  const { url } = await plain();
  const s = new GatewaySession(url, 'retry-1');
  await s.send();
  const info = await s.send('1');
  t.equal(await s.resend(), info, 'same text, same screen');
  t.equal(await s.resend(), info);
  t.match(await s.send('1'), /^CON About/, 'the next input applies once');
  t.match(await s.send('0'), /^CON Know More/);
  // A retry of the final END is answered with the same END, not with an "expired" screen.
  const end = await s.send('*');
  t.match(end, /^END /);
  t.equal(await s.resend(), end);
});

t.test('create account, log in, account details, change PIN, log out, and the PIN never shows', async (t) => {
  const server = await startTestServer(t, { env: { OPERATOR_TOKEN: 'op-secret' } });
  const { url } = server;
  const weak = new GatewaySession(url, 'create-weak');
  await weak.send();
  await weak.send('2');
  await weak.send('2');
  await weak.send('Amina Wanjiru');
  t.match(await weak.send('not-an-email'), /^CON .*email/i, 'a bad email is refused with a message');
  await weak.send('amina@example.org');
  t.match(await weak.send('12345'), /^CON .*(weak|easy|guess)/i, 'a weak PIN is refused with a message');
  t.match(await weak.send('11111'), /^CON .*(weak|easy|guess)/i);
  t.match(await weak.send('123'), /^CON .*5/, 'a short PIN is refused');
  await weak.send('48207');
  t.match(await weak.send('48208'), /^CON PINs do not match/, 'a mismatch says so');
  await weak.send('48207');
  const done = await weak.send('48207');
  t.match(done, /^CON Account created!\nYour customer ID: C[0-9A-F]{8}/);
  checkScreens(t, weak);

  const customerId = /C[0-9A-F]{8}/.exec(done)![0];
  const login = new GatewaySession(url, 'login-1');
  await login.send();
  await login.send('2');
  t.match(await login.send('1'), /customer ID/i);
  t.match(await login.send(customerId.toLowerCase()), /PIN/);
  const services = await login.send('48207');
  t.match(services, /^CON Hello Amina/);
  t.match(services, /1\. Account details/);

  const debug: any = await (
    await fetch(`${url}/api/ussd/debug/login-1`, { headers: { authorization: 'Bearer op-secret' } })
  ).json();
  t.equal(debug.debugInfo.context.isAuthenticated, true);
  t.equal(debug.debugInfo.context.customerId, customerId);
  t.notMatch(JSON.stringify(debug), /48207/, 'the debug record never holds the PIN');

  const details = await login.send('1');
  t.match(details, new RegExp(`ID: ${customerId}`));
  t.match(details, /Email: amina@example.org/);
  await login.send('0');
  await login.send('2'); // Change PIN
  t.match(await login.send('00000'), /^CON Wrong PIN/, 'the current PIN is checked');
  await login.send('48207');
  await login.send('59314');
  t.match(await login.send('59314'), /PIN has been changed/);
  t.match(await login.send('3'), /^END You are logged out/);
  checkScreens(t, login);

  // The new PIN works in a new session; the old one does not.
  const again = new GatewaySession(url, 'login-2');
  await again.send();
  await again.send('2');
  await again.send('1');
  await again.send(customerId);
  t.match(await again.send('48207'), /^CON Wrong PIN\. 2 attempts left/);
  t.match(await again.send('59314'), /^CON Hello Amina/);

  // Nothing on disk holds a PIN in plain text.
  await server.shutdown();
  for (const file of readdirSync(server.dataDir)) {
    const bytes = readFileSync(join(server.dataDir, file));
    for (const pin of ['48207', '59314', '48208']) t.equal(bytes.indexOf(pin), -1, `${file} does not contain ${pin}`);
  }
});

t.test('three wrong PINs lock the account across sessions, not per dial', async (t) => {
  const { url } = await plain();
  const { customerId } = await createAccount(url, 'lock-create');
  const attempt = async (sessionId: string, pins: string[]) => {
    const s = new GatewaySession(url, sessionId);
    await s.send();
    await s.send('2');
    await s.send('1');
    const screens = [await s.send(customerId)];
    for (const pin of pins) screens.push(await s.send(pin));
    return screens.join('\n---\n');
  };
  const first = await attempt('lock-1', ['11112', '11113']);
  t.match(first, /2 attempts left[\s\S]*1 attempt left/);
  // A new dial does not reset the counter: the third wrong PIN locks.
  const second = await attempt('lock-2', ['11114']);
  t.match(second, /Too many wrong PINs\. Account locked\. Try again in 30 min/);
  const third = await attempt('lock-3', ['48207']);
  t.match(third, /Account locked\. Try again in 30 min/, 'a later dial is told about the lock');
  t.notMatch(third, /Hello/, 'even the right PIN does not log in while locked');
});

t.test('operator routes: token auth, loopback-only without a token, records and the 404 answer', async (t) => {
  const withToken = await startTestServer(t, { env: { OPERATOR_TOKEN: 'op-secret' } });
  const s = new GatewaySession(withToken.url, 'op-1');
  await s.send();
  t.equal((await fetch(`${withToken.url}/api/ussd/sessions`)).status, 401);
  t.equal(
    (await fetch(`${withToken.url}/api/ussd/debug/op-1`, { headers: { authorization: 'Bearer wrong' } })).status,
    401,
  );
  const auth = { headers: { authorization: 'Bearer op-secret' } };
  const list = await (await fetch(`${withToken.url}/api/ussd/sessions`, auth)).json();
  t.same(list, { activeSessions: ['op-1'], count: 1 });
  const debug: any = await (await fetch(`${withToken.url}/api/ussd/debug/op-1`, auth)).json();
  t.match(debug, {
    sessionId: 'op-1',
    debugInfo: {
      state: 'preMenu',
      status: 'active',
      context: { sessionId: 'op-1', phoneNumber: '+254700000001', isAuthenticated: false },
    },
    activeSessions: ['op-1'],
  });
  t.match(debug.debugInfo.context.message, /^Welcome/);
  const missing = await fetch(`${withToken.url}/api/ussd/debug/nope`, auth);
  t.equal(missing.status, 404);
  t.same(await missing.json(), {
    sessionId: 'nope',
    debugInfo: { error: 'Session not found' },
    activeSessions: ['op-1'],
  });

  // Without a token only loopback callers are served (behind a trusted proxy, none: test/http-proxy-trust.test.ts).
  const local = await plain();
  t.equal((await fetch(`${local.url}/api/ussd/sessions`)).status, 200, 'loopback is served');
});

t.test('sessions expire after USSD_SESSION_TTL_SECONDS; END closes at once', async (t) => {
  const { url } = await startTestServer(t, { env: { USSD_SESSION_TTL_SECONDS: '1' } });
  const s = new GatewaySession(url, 'ttl-1');
  await s.send();
  await s.send('1');
  const ended = new GatewaySession(url, 'ttl-2');
  await ended.send();
  await ended.send('*');
  const listed = await (await fetch(`${url}/api/ussd/sessions`)).json();
  t.same(listed, { activeSessions: ['ttl-1'], count: 1 }, 'an ended session is not active');
  t.equal((await fetch(`${url}/api/ussd/debug/ttl-2`)).status, 404, 'an ended session is unknown to the debug route');

  // Expiry is due 1 s after the last step: wait for it to show rather than for a fixed time.
  await eventually(async () => (await fetch(`${url}/api/ussd/debug/ttl-1`)).status === 404, 'ttl-1 to expire', 400);
  t.equal((await fetch(`${url}/api/ussd/debug/ttl-1`)).status, 404, 'an expired session is unknown');
  t.same(await (await fetch(`${url}/api/ussd/sessions`)).json(), { activeSessions: [], count: 0 });
  t.match(await s.send('1'), /^END .*expired.*dial again/i, 'the next input after expiry asks to dial again');
  const redial = new GatewaySession(url, 'ttl-1');
  t.match(await redial.send(), /^CON Welcome/, 'dialling again starts afresh');
});

t.test('a session id belongs to one phone number', async (t) => {
  const { url } = await plain();
  await new GatewaySession(url, 'phone-1', '+254700000001').send();
  const intruder = new GatewaySession(url, 'phone-1', '+254799999999');
  t.equal(await intruder.send(), INVALID);
});

t.test('the rate limit answers 429 on the USSD route too; allow-listed gateways are exempt', async (t) => {
  const { url } = await startTestServer(t, { env: { RATE_LIMIT_MAX: '2' } });
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await postUssd(url, { ...valid, sessionId: `rl-${i}` })).status);
  t.same(statuses, [200, 200, 429]);
  const gateway = await startTestServer(t, { env: { RATE_LIMIT_MAX: '2', RATE_LIMIT_ALLOWLIST: '127.0.0.1' } });
  for (let i = 0; i < 5; i++) t.equal((await postUssd(gateway.url, { ...valid, sessionId: `gw-${i}` })).status, 200);
});

t.test(
  'a terminated actor host: in-flight calls get the unavailable answer, the session continues from LMDB',
  async (t) => {
    // The file's shared server: no test after this one uses it, so its host's restart touches nothing else.
    const server = await plain();
    const s = new GatewaySession(server.url, 'crash-1');
    await s.send();
    await s.send('1');
    await server.runtime.terminateHost(0);
    // While the host restarts, a request is answered with the spec's fault text, never an HTTP error.
    const during = await postUssd(server.url, { ...valid, sessionId: 'crash-2' });
    t.same([during.status, during.body], [200, UNAVAILABLE]);
    await eventually(() => server.runtime.isHostAlive(0), 'the host to come back', 400);
    t.equal(server.runtime.restartCount(0), 1, 'the host was restarted');
    t.match(await s.send('2'), /^CON Pricing/, 'the session resumed where it was');
  },
);

t.test('a server restart on the same DATA_DIR keeps sessions and accounts', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-restart-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const { customerId } = await createAccount(first.url, 'restart-create');
  const s = new GatewaySession(first.url, 'restart-1');
  await s.send();
  await s.send('1');
  await first.shutdown();

  const second = await startTestServer(t, { dataDir });
  const resumed = new GatewaySession(second.url, 'restart-1');
  resumed.inputs.push('1');
  t.match(await resumed.send('3'), /^CON Delivery/, 'the session continues after the restart');
  const login = new GatewaySession(second.url, 'restart-login');
  await login.send();
  await login.send('2');
  await login.send('1');
  await login.send(customerId);
  t.match(await login.send('48207'), /^CON Hello Amina/, 'the account and its PIN survived');
});

t.test('SIGTERM drains: the process answers what is in flight, closes LMDB and exits 0', async (t) => {
  const { child, url, exited, output } = await startChildServer(t);
  // Ten clients send requests back to back; SIGTERM arrives once answers are flowing.
  let answered = 0;
  let signalled = false;
  const bodies: string[] = [];
  const failures: string[] = [];
  const client = async (c: number) => {
    for (let i = 0; ; i++) {
      try {
        const answer = await postUssd(url, { ...valid, sessionId: `drain-${c}-${i}` });
        // During the drain, requests on open connections hear 503 and their connection closes (test/http-drain.test.ts).
        if (answer.status !== 503) bodies.push(answer.body);
        if (++answered === 20 && !signalled) {
          signalled = true;
          child.kill('SIGTERM');
        }
      } catch (error) {
        failures.push(String((error as Error & { cause?: { code?: string } }).cause?.code ?? error));
        return;
      }
    }
  };
  const clients = Promise.all(Array.from({ length: 10 }, (_, c) => client(c)));
  const code = await exited;
  await clients;
  t.equal(code, 0, 'clean exit');
  t.match(output(), /"msg":"draining"/);
  t.match(output(), /"msg":"stopped"/, 'LMDB closed and everything stopped');
  t.ok(answered >= 20, `${answered} requests answered`);
  t.same(
    bodies.filter((body) => !/^CON Welcome/.test(body)),
    [],
    'every answer that was sent is whole',
  );
  t.equal(failures.length, 10, 'after the drain, new connections are refused (the port is closed)');
});
