// The aggregator adapters through HTTP on a real server: each provider's documented examples replayed, the whole
// built-in service driven through each adapter (they send only the latest input: the session keeps the history),
// another provider's fields answered with the provider's own error form, and Africa's Talking's end-of-session
// notification counted and recorded. Formats and sources: docs/ussd-aggregators.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PROVIDERS, ProviderClient, arkesel, beem, hubtel, nalo, postJson } from './helpers/aggregators.js';
import { scrape as scrapeWith } from './helpers/metrics.js';
import { eventually } from './helpers/oracle.js';
import { sharedTestServer, startTestServer } from './helpers/server.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

const INVALID_TEXT = 'Invalid input. Please try again.';
const TOKEN = 'op-secret';

// The built-in service, also claiming the codes of the providers' documented examples.
const servicesDir = mkdtempSync(join(tmpdir(), 'sar-adapters-'));
t.teardown(() => rmSync(servicesDir, { recursive: true, force: true }));
const builtin = readFileSync(new URL('../ussd-services/builtin.yaml', import.meta.url), 'utf8')
  .replace(/^\$schema:.*$/m, '')
  .replace(/^serviceCodes: .*$/m, "serviceCodes: ['*384#', '*123#', '*713*4#', '*928*01#', '*920*1234#', '*149*46#']");
writeFileSync(join(servicesDir, 'builtin.yaml'), builtin);

const server = sharedTestServer(t, {
  env: { USSD_SERVICES_DIR: servicesDir, USSD_BEEM_SERVICE_CODE: '*149*46#', OPERATOR_TOKEN: TOKEN },
});

const scrape = (url: string) => scrapeWith(url, { authorization: `Bearer ${TOKEN}` });
const debug = async (url: string, sessionId: string) =>
  fetch(`${url}/api/ussd/debug/${encodeURIComponent(sessionId)}`, { headers: { authorization: `Bearer ${TOKEN}` } });

t.test("Hubtel: the documented requests (ussd-builder's test values) and their answers", async (t) => {
  const { url } = await server();
  const at = `${url}/api/ussd/hubtel`;
  const base = {
    Mobile: '233208183783',
    SessionId: 'bd7bc392496b4b28af2033ba83f5e400',
    ServiceCode: '713*4',
    Operator: 'MTN',
    ClientState: '',
  };
  const welcome = await postJson(at, { ...base, Type: 'Initiation', Message: '*713*4#', Sequence: 1 });
  t.equal(welcome.status, 200);
  t.same(
    Object.keys(welcome.json).sort(),
    ['ClientState', 'DataType', 'FieldType', 'Label', 'Message', 'SessionId', 'Type'],
    'the answer has the fields of the Programmable Services response',
  );
  t.match(welcome.json, { SessionId: base.SessionId, Type: 'Response', DataType: 'input', FieldType: 'text' });
  t.match(welcome.json.Message, /^Welcome! Choose an option:\n1\. Know More/);
  t.equal(welcome.json.Label, 'Welcome! Choose an option:', 'Label: the first line of the screen');

  // Sequence as a string, as Hubtel's own sample sends it; the same Sequence again is a retry, not a new "1".
  const know = await postJson(at, { ...base, Type: 'Response', Message: '1', Sequence: '2' });
  t.match(know.json, { Type: 'Response', Message: /^Know More/ });
  const again = await postJson(at, { ...base, Type: 'Response', Message: '1', Sequence: '2' });
  t.same(again.json, know.json, 'a retried Sequence answers the same screen');
  const about = await postJson(at, { ...base, Type: 'Response', Message: '1', Sequence: 3 });
  t.match(about.json.Message, /^About this service/, 'the same input with the next Sequence is applied');

  const view: any = await (await debug(url, `hubtel:${base.SessionId}`)).json();
  t.equal(view.debugInfo.context.phoneNumber, '+233208183783', 'the session runs under the E.164 number');

  // The user leaves: Hubtel posts Release; the answer is a Release and the session is over.
  const release = await postJson(at, { ...base, Type: 'Release', Message: '', Sequence: 4 });
  t.match(release.json, { Type: 'Release', DataType: 'display' });
  t.equal((await debug(url, `hubtel:${base.SessionId}`)).status, 404, 'the released session is no longer live');
  const late = await postJson(at, { ...base, Type: 'Response', Message: '0', Sequence: 5 });
  t.match(late.json, { Type: 'Release', Message: /expired/ }, 'a late input is told the session is over');

  // Hubtel's own sample is an app-channel initiation (a service id, no USSD string): not a USSD dial here.
  const app = await postJson(at, {
    Sequence: '1',
    Type: 'initiation',
    Message: '',
    ServiceCode: 'b230733cd56b4a0fad820e39f66bc27c',
    Operator: 'Hubtel-Android',
    ClientState: '',
    Mobile: '233246912184',
    SessionId: '8d440a43a98b4614b9df22b79c8190b8',
  });
  t.match(app.json, { Type: 'Release', Message: INVALID_TEXT, SessionId: '8d440a43a98b4614b9df22b79c8190b8' });

  const timeout = new ProviderClient(url, hubtel, 'hubtel-timeout');
  t.match(await timeout.send(), /^CON Welcome/);
  await timeout.post({ ...hubtel.input(timeout.session, ''), Type: 'Timeout' });
  t.equal(timeout.last.Type, 'Release');
  t.equal((await debug(url, 'hubtel:hubtel-timeout')).status, 404, 'a timed-out session is over');
});

t.test('Arkesel: newSession dial, latest-input steps, and the answer fields', async (t) => {
  const { url } = await server();
  const s = new ProviderClient(url, arkesel, '1589987456', '233200000001', '*928*01#');
  t.match(await s.send(), /^CON Welcome/);
  t.same(Object.keys(s.last).sort(), ['continueSession', 'message', 'msisdn', 'sessionID', 'userID']);
  t.match(s.last, { sessionID: '1589987456', userID: 'arkesel-user', msisdn: '233200000001', continueSession: true });
  t.match(await s.send('1'), /^CON Know More/);
  t.match(await s.send('*'), /^END .*Goodbye/);
  t.equal(s.last.continueSession, false);
});

t.test("Nalo: the documented request (MSGTYPE false: the user's latest input) and the answer fields", async (t) => {
  const { url } = await server();
  const s = new ProviderClient(url, nalo, '16590115252429751', '233244000001', '*920*1234#');
  t.match(await s.send(), /^CON Welcome/);
  t.same(Object.keys(s.last).sort(), ['MSG', 'MSGTYPE', 'MSISDN', 'USERID']);
  t.match(s.last, { USERID: 'NALOTest', MSISDN: '233244000001', MSGTYPE: true });
  t.match(await s.send('1'), /^CON Know More/);
  // The documented example: USERDATA "3" with MSGTYPE false.
  t.match(
    await s.post({
      USERID: 'NALOTest',
      MSISDN: '233244000001',
      USERDATA: '3',
      MSGTYPE: false,
      NETWORK: 'MTN',
      SESSIONID: '16590115252429751',
    }),
    /^CON Delivery/,
  );
  t.match(await s.send('00'), /^CON Welcome/);
  t.match(await s.send('*'), /^END .*Goodbye/);
  t.equal(s.last.MSGTYPE, false, 'MSGTYPE false ends the session');
});

t.test("Beem: the documented initiate (request_id 0, response '0'), continue and terminate", async (t) => {
  const { url } = await server();
  const s = new ProviderClient(url, beem, '4574', '255762089337');
  t.match(await s.send(), /^CON Welcome/, 'USSD_BEEM_SERVICE_CODE names the code dialled');
  t.same(Object.keys(s.last).sort(), ['command', 'msisdn', 'operator', 'payload', 'session_id']);
  t.match(s.last, { msisdn: '255762089337', operator: 'vodacom', session_id: '4574', command: 'continue' });
  t.equal(s.last.payload.request_id, 0, 'request_id echoed');
  // A numeric response, as Beem's examples send it.
  t.match(await s.post({ ...beem.input(s.session, ''), payload: { request_id: 1, response: 1 } }), /^CON Know More/);
  t.equal(s.last.payload.request_id, 1);
  await s.post({ command: 'terminate', msisdn: '255762089337', session_id: '4574', operator: 'vodacom', payload: {} });
  t.match(s.last, { command: 'terminate' });
  t.equal((await debug(url, 'beem:4574')).status, 404, 'the terminated session is over');
});

for (const provider of PROVIDERS) {
  t.test(`${provider.name}: the whole built-in service through the adapter`, async (t) => {
    const { url } = await server();
    const msisdn = `2547${String(PROVIDERS.indexOf(provider)).padStart(2, '0')}000011`;
    const create = new ProviderClient(url, provider, `${provider.name}-create`, msisdn);
    t.match(await create.send(), /^CON Welcome/);
    t.match(await create.send('1'), /^CON Know More/);
    t.match(await create.send('2'), /^CON Pricing/);
    t.match(await create.send('0'), /^CON Know More/, 'back');
    t.match(await create.send('0'), /^CON Welcome/, 'back again');
    t.match(await create.send('1'), /^CON Know More/);
    t.match(await create.send('1'), /^CON About this service/);
    t.match(await create.send('00'), /^CON Welcome/, 'home');
    t.match(await create.send('2'), /^CON Account Menu/);
    // The same input twice in a row: an input, not a retry (these gateways send no history to tell them apart).
    t.match(await create.send('2'), /full name/i);
    t.match(await create.send('Amina Wanjiru'), /email/i);
    t.match(await create.send('00'), /PIN/, 'email skipped');
    t.match(await create.send('48207'), /confirm|again/i);
    const done = await create.send('48207');
    t.match(done, /^CON Account created!\nYour customer ID: C[0-9A-F]{8}/);
    const customerId = /C[0-9A-F]{8}/.exec(done)![0];
    t.match(await create.send('*'), /^END .*Goodbye/);

    const login = new ProviderClient(url, provider, `${provider.name}-login`, msisdn);
    await login.send();
    await login.send('2');
    t.match(await login.send('1'), /customer ID/i);
    t.match(await login.send(customerId), /PIN/);
    t.match(await login.send('11111'), /^CON Wrong PIN\. 2 attempts left/);
    const services = await login.send('48207');
    t.match(services, /^CON Hello Amina/);
    const view: any = await (await debug(url, `${provider.name}:${provider.name}-login`)).json();
    t.equal(view.debugInfo.context.isAuthenticated, true);
    t.notMatch(JSON.stringify(view), /48207|11111/, 'no PIN in the session view');
    t.match(await login.send('1'), new RegExp(`ID: ${customerId}\\nName: Amina Wanjiru\\nPhone: \\+${msisdn}`));
    t.match(await login.send('0'), /^CON Hello Amina/);
    t.match(await login.send('2'), /current PIN/i);
    t.match(await login.send('48207'), /new 5-digit PIN/i);
    await login.send('59314');
    t.match(await login.send('59314'), /PIN has been changed/);
    t.match(await login.send('3'), /^END You are logged out/);

    // The same account is reached from the Africa's Talking route: one engine, one set of accounts.
    const atSession = new GatewaySession(url, `${provider.name}-via-at`, `+${msisdn}`, '*384#');
    await atSession.send();
    await atSession.send('2');
    await atSession.send('1');
    await atSession.send(customerId);
    t.match(await atSession.send('59314'), /^CON Hello Amina/, 'the new PIN works through AT');
  });

  t.test(`${provider.name}: bad input and other providers' fields answer ${provider.name}'s error form`, async (t) => {
    const { url } = await server();
    const others = PROVIDERS.filter((other) => other !== provider);
    const session = { sessionId: 'x-1', msisdn: '233246912184', code: '*384#', sent: 0 };
    const bodies: unknown[] = [
      ...others.flatMap((other) => [other.dial(session), other.input(session, '1')]),
      { sessionId: 'at-1', serviceCode: '*384#', phoneNumber: '+254700000001', text: '' },
      {},
      [],
      'null',
      '{not json',
      { ...provider.dial(session), ...{ Mobile: 'abc', msisdn: 'abc', MSISDN: 'abc' } },
    ];
    for (const body of bodies) {
      const { status, json } = await postJson(`${url}${provider.path}`, body);
      t.equal(status, 200, `${JSON.stringify(body).slice(0, 50)}: HTTP 200`);
      t.equal(provider.screen(json), `END ${INVALID_TEXT}`, `${JSON.stringify(body).slice(0, 50)}: its END form`);
    }
    // A continuation of a session that does not exist: told it expired, in the provider's form.
    const { json } = await postJson(`${url}${provider.path}`, provider.input({ ...session, sessionId: 'none' }, '1'));
    t.match(provider.screen(json), /^END .*expired/);
  });
}

t.test("Africa's Talking end-of-session notification: counted, its duration observed, the session ended", async (t) => {
  const { url } = await server();
  const before = await scrape(url);
  const s = new GatewaySession(url, 'ATUid_end1', '+254711000111', '*384#', true);
  await s.send();
  await s.send('1');
  const notify = (fields: Record<string, string>) =>
    fetch(`${url}/api/ussd/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  // The fields Africa's Talking posts to the events callback URL.
  const fields = {
    sessionId: 'ATUid_end1',
    serviceCode: '*384#',
    networkCode: '63902',
    phoneNumber: '+254711000111',
    status: 'Incomplete',
    cost: 'KES 0.0000',
    durationInMillis: '41250',
    hopsCount: '2',
    input: '1',
    lastAppResponse: 'CON Know More',
    errorMessage: '',
    date: '2026-12-02 18:00:00.000',
  };
  const res = await notify(fields);
  t.equal(res.status, 200);
  t.same(await res.json(), { recorded: true });
  t.equal((await debug(url, 'ATUid_end1')).status, 404, 'the session is no longer live');
  t.match(await s.send('1'), /^END /, 'a late input gets an END, never the old CON');
  const again = await notify(fields);
  t.same(await again.json(), { recorded: true }, 'a repeated notification changes nothing');

  // A session that ended with our END is recorded too; an unknown one is only counted.
  const done = new GatewaySession(url, 'ATUid_end2', '+254711000111', '*384#', true);
  await done.send();
  await done.send('*');
  const success = await notify({ ...fields, sessionId: 'ATUid_end2', status: 'Success', durationInMillis: '3000' });
  t.same(await success.json(), { recorded: true });
  const unknown = await notify({ ...fields, sessionId: 'ATUid_never', status: 'Failed', durationInMillis: '500' });
  t.same(await unknown.json(), { recorded: false });
  const wrongPhone = await notify({ ...fields, sessionId: 'ATUid_end2', phoneNumber: '+254700009999' });
  t.same(await wrongPhone.json(), { recorded: false }, "another phone's notification is not recorded");

  const after = await scrape(url);
  const count = (status: string) =>
    after.value('ussd_gateway_session_ends_total', { gateway: 'africastalking', status }) -
    before.value('ussd_gateway_session_ends_total', { gateway: 'africastalking', status });
  t.equal(count('incomplete'), 2, 'the repeated notification is not counted again');
  t.equal(count('success'), 1);
  t.equal(count('failed'), 1);
  const duration = { gateway: 'africastalking', status: 'incomplete' };
  t.equal(
    after.count('ussd_gateway_session_duration_seconds', duration) -
      before.count('ussd_gateway_session_duration_seconds', duration),
    2,
  );
  const sum = (scraped: typeof after) =>
    scraped.samples
      .filter((s) => s.name === 'ussd_gateway_session_duration_seconds_sum' && s.labels.status === 'incomplete')
      .reduce((total, s) => total + s.value, 0);
  t.equal(sum(after) - sum(before), 82.5, 'two durations of 41.25 s');

  for (const bad of [{}, { sessionId: 'ATUid_end1' }, { status: 'Success' }]) {
    const answer = await notify(bad as Record<string, string>);
    t.equal(answer.status, 400, `${JSON.stringify(bad)}: 400, not a 5xx`);
  }
});

t.test('the end counted on the service: reason gateway', async (t) => {
  const { url } = await server();
  const s = new ProviderClient(url, hubtel, 'hubtel-metrics');
  await s.send();
  await s.post({ ...hubtel.input(s.session, ''), Type: 'Release' });
  // The actor hosts report their counters to the main thread now and then: the scrape shows it within a report.
  const ended = await eventually(async () => {
    const scraped = await scrape(url);
    const value = scraped.value('ussd_service_sessions_ended_total', { service: 'builtin', reason: 'gateway' });
    return value >= 1 ? value : undefined;
  }, 'the gateway end on the service funnel');
  t.ok(ended >= 1, `ussd_service_sessions_ended_total{reason="gateway"} = ${ended}`);
  const scraped = await scrape(url);
  t.ok(scraped.value('ussd_gateway_session_ends_total', { gateway: 'hubtel', status: 'release' }) >= 1);
});

t.test('the history a latest-input session keeps survives a restart (it is in the session record)', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sar-adapters-restart-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { USSD_SERVICES_DIR: servicesDir, PIN_ENCRYPTION_KEY: 'ab'.repeat(32) };
  const first = await startTestServer(t, { dataDir, env });
  const s = new ProviderClient(first.url, hubtel, 'hubtel-restart');
  await s.send();
  await s.send('1');
  const pricing = await s.send('2');
  t.match(pricing, /^CON Pricing/);
  await first.shutdown();

  const second = await startTestServer(t, { dataDir, env });
  const again = new ProviderClient(second.url, hubtel, 'hubtel-restart');
  again.session.sent = s.session.sent - 1;
  t.equal(await again.send('2'), pricing, 'the last Sequence again, after the restart: the same screen (a retry)');
  t.match(await again.send('0'), /^CON Know More/, 'the next input continues where the session was');
});
