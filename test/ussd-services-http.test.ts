// USSD services as data (issue 40) through HTTP on one node, as a telecom gateway dials them: two services on two
// codes, an extended code, an unknown code, languages remembered across dials and restarts, paging, reloads while a
// session runs (by file change and by SIGHUP), a broken reload refused, and the versions in /health and /metrics.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { scrape } from './helpers/metrics.js';
import { eventually } from './helpers/oracle.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { GatewaySession, postUssd } from './helpers/ussd-gateway.js';
import {
  AwaitedLog,
  refused,
  reloaded,
  servicesDir,
  SHOP_CODE,
  SHOP_PRODUCTS_CODE,
  shopText,
  shopVersion,
} from './helpers/ussd-services.js';

const UNKNOWN_TEXT = 'No service on this code. Dial *500# for the shop.';
const dir = servicesDir(t);
const dataDir = mkdtempSync(join(tmpdir(), 'sar-services-data-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const log = new AwaitedLog();
const env = { USSD_SERVICES_DIR: dir, USSD_UNKNOWN_CODE_TEXT: UNKNOWN_TEXT };
let server: TestServer;
t.before(async () => {
  server = await startTestServer(t, { env, dataDir, log: log.logger });
});

const shop = (id: string, phone: string, code = SHOP_CODE) => new GatewaySession(server.url, id, phone, code);
const versions = async () =>
  ((await (await fetch(`${server.url}/health`)).json()) as { ussd: { services: { id: string; version: string }[] } })
    .ussd.services;
/** The metrics of the actor hosts reach /metrics within a report interval: read until `check` holds. */
const metricsWhere = (check: (value: (name: string, labels?: Record<string, string>) => number) => boolean) =>
  eventually(async () => {
    const s = await scrape(server.url);
    return check((name, labels) => s.value(name, labels)) ? s : undefined;
  }, 'the metrics to show it');

t.test('two services on two codes; an extended code starts at its state; an unknown code ends', async (t) => {
  const builtin = new GatewaySession(server.url, 'two-1', '+254711000001', '*384#');
  t.match(await builtin.send(), /^CON Welcome! Choose an option:\n1\. Know More\n2\. Account Menu/, 'the built-in');
  t.equal(
    await shop('two-2', '+254711000001').send(),
    "CON Welcome to Mama Mboga's shop\n1. Products\n2. Language\n*. Exit",
    'the shop, on its own code',
  );
  t.match(await shop('two-3', '+254711000001', SHOP_PRODUCTS_CODE).send(), /^CON Products \(price in KES\):\n1\. /);
  // A code extending a claimed one (not claimed itself) dials that service at its start.
  t.match(await shop('two-4', '+254711000001', '*500*9#').send(), /^CON Welcome to Mama Mboga's shop\n/);

  const before = await scrape(server.url);
  const unknown = await postUssd(server.url, {
    sessionId: 'two-5',
    serviceCode: '*777#',
    phoneNumber: '+254711000001',
    text: '',
  });
  t.same(unknown, { status: 200, contentType: 'text/plain; charset=utf-8', body: `END ${UNKNOWN_TEXT}` });
  const later = await postUssd(server.url, {
    sessionId: 'two-5',
    serviceCode: '*777#',
    phoneNumber: '+254711000001',
    text: '1',
  });
  t.match(later.body, /^END /, 'an input after it finds no session: END, never a 5xx');
  await metricsWhere((value) => value('ussd_unknown_codes_total') === before.value('ussd_unknown_codes_total') + 1);
  t.pass('the unknown code is counted in ussd_unknown_codes_total');
});

t.test('a long list pages: More, Back to the page before, an option from page 2', async (t) => {
  const s = shop('page-1', '+254711000002', SHOP_PRODUCTS_CODE);
  const first = await s.send();
  t.match(first, /\n98\. More\n0\. Back\n\*\. Exit$/, 'page 1 offers More, its own Back and Exit');
  t.match(first, /\n6\. Bread 400g 65\n/, 'page 1 ends with an option, whole');
  const second = await s.send('98');
  t.match(second, /^CON 7\. Eggs tray of 30 450\n/, 'page 2 goes on with the next option');
  t.notMatch(second, /98\. More/, 'the last page offers no More');
  t.match(second, /\n12\. Wheat flour 2kg 230\n0\. Back\n\*\. Exit$/);
  for (const screen of [first, second]) t.ok(screen.length <= 182, `${screen.length} characters fit in 182`);
  t.equal(await s.send('0'), first, 'Back on page 2 shows page 1 again');
  t.equal(await s.send('98'), second);
  t.equal(await s.send('x'), `CON Invalid choice.\n${first.slice(4)}`, 'a wrong key: the notice above page 1');
  t.equal(await s.send('98'), second, 'and More shows page 2 as before');
  t.equal(await s.send('11'), 'CON How many? (1-20)\n0. Back', 'an option of page 2, chosen on page 2');
  t.equal(await s.send('0'), first, "the input's Back returns to the list, at page 1");
  await s.send('98');
  t.equal(await s.send('3'), 'CON How many? (1-20)\n0. Back', 'an option of page 1, chosen on page 2');

  t.equal(await s.send('25'), 'CON Enter a number from 1 to 20.\nHow many? (1-20)\n0. Back', 'over the range');
  t.equal(await s.send('two'), 'CON Enter a number from 1 to 20.\nHow many? (1-20)\n0. Back', 'not a number');
  t.equal(await s.send('4'), 'CON Item 3: 4 at KES 150 each\n1. Confirm\n2. Cancel\n0. Back');
  t.equal(await s.send('1'), 'END Order received: item 3 x 4. We will send an SMS to +254711000002.');

  const exit = shop('page-2', '+254711000002');
  await exit.send();
  t.equal(await exit.send('*'), 'END Thank you for shopping with us!');
  await metricsWhere(
    (value) =>
      value('ussd_service_sessions_ended_total', { service: 'shop', state: 'confirm', reason: 'end' }) >= 1 &&
      value('ussd_service_sessions_ended_total', { service: 'shop', state: 'home', reason: 'exit' }) >= 1 &&
      value('ussd_service_steps_total', { service: 'shop', state: 'quantity' }) >= 2,
  );
  t.pass('sessions ended by service, state and reason (end, exit), and steps by state');
});

t.test('a language chosen once opens the next dial of that number, in that service only', async (t) => {
  const phone = '+254711000003';
  const s = shop('lang-1', phone);
  await s.send();
  t.equal(await s.send('2'), 'CON Choose a language:\n1. English\n2. Kiswahili\n0. Back');
  t.equal(await s.send('2'), 'CON Karibu duka la Mama Mboga\n1. Bidhaa\n2. Lugha\n*. Toka', 'Swahili at once');
  const products = await s.send('1');
  t.match(products, /^CON Bidhaa \(bei kwa KES\):\n1\. Unga wa mahindi 2kg 210\n/);
  t.match(products, /\n98\. Zaidi\n0\. Rudi\n\*\. Toka$/, 'paged, with the Swahili labels');
  t.match(products, /\n5\. Maziwa 500ml 60\n98\. Zaidi\n0\. Rudi\n\*\. Toka$/, 'longer words: fewer per page');
  const second = await s.send('98');
  t.match(second, /^CON 6\. Mkate 400g 65\n7\. Mayai trei ya 30 450\n[\s\S]*\n98\. Zaidi\n0\. Rudi\n\*\. Toka$/);
  t.equal(await s.send('98'), 'CON 12. Unga wa ngano 2kg 230\n0. Rudi\n*. Toka', 'page 3');
  t.equal(await s.send('0'), second, 'Back: page 2');
  // A wrong key on page 2: the notice above page 1, paged as before (room was kept for it), so More goes on
  // with the next option and none is skipped.
  t.equal(await s.send('x'), `CON Chaguo si sahihi.\n${products.slice(4)}`);
  t.equal(await s.send('98'), second);
  t.match(await shop('lang-2', phone).send(), /^CON Karibu duka la Mama Mboga\n/, 'the next dial: Swahili');
  t.match(await shop('lang-3', '+254711000004').send(), /^CON Welcome to /, 'another number: the default');
  const builtin = new GatewaySession(server.url, 'lang-4', phone, '*384#');
  t.match(await builtin.send(), /^CON Welcome! /, 'another service: its own languages');

  const back = shop('lang-5', phone);
  await back.send();
  await back.send('2');
  t.match(await back.send('1'), /^CON Welcome to /, 'chosen back to English');
  t.match(await shop('lang-6', phone).send(), /^CON Welcome to /);
  // Swahili again for the restart test at the end of this file.
  const again = shop('lang-7', phone);
  await again.send();
  await again.send('2');
  await again.send('2');
});

t.test('a reload on file change: a running session finishes on its version, new dials get the new one', async (t) => {
  const running = shop('reload-1', '+254711000005');
  await running.send();
  await running.send('1');

  const taken = log.next(reloaded('file change'));
  writeFileSync(join(dir, 'shop.yaml'), shopVersion('1.1.0', 50));
  t.match((await taken).services, ['builtin@1.0.0', 'shop@1.1.0']);

  // The actor hosts swap their catalog on the publication's broadcast, a moment after the log line.
  const welcome = await eventually(async () => {
    const screen = await shop(`reload-2-${Math.random()}`, '+254711000005').send();
    return screen.includes('(v1.1.0)') ? screen : undefined;
  }, 'new dials to get 1.1.0');
  t.equal(welcome, "CON Welcome to Mama Mboga's shop (v1.1.0)\n1. Products\n2. Language\n*. Exit");
  t.equal(await running.send('2'), 'CON How many? (1-20)\n0. Back', 'the running session: still 1.0.0');
  t.match(await running.send('30'), /^CON Enter a number from 1 to 20\./, 'and its rules');
  t.match(await running.send('1'), /^CON Item 2: 1 at KES 180 each\n/);
  t.match(await running.send('1'), /^END Order received/);

  const fresh = shop('reload-3', '+254711000005', SHOP_PRODUCTS_CODE);
  await fresh.send();
  t.equal(await fresh.send('2'), 'CON How many? (1-50)\n0. Back', 'a new session: 1.1.0');
  t.match(await fresh.send('30'), /^CON Item 2: 30 at KES 180 each/);

  t.same(await versions(), [
    { id: 'builtin', version: '1.0.0', name: 'Customer accounts', codes: [{ code: '*384#' }, { code: '*123#' }] },
    {
      id: 'shop',
      version: '1.1.0',
      name: 'Mama Mboga shop',
      codes: [{ code: '*500#' }, { code: '*500*2#', start: 'products' }],
    },
  ]);
  const metrics = await scrape(server.url);
  t.equal(metrics.value('ussd_services_loaded', { service: 'shop', version: '1.1.0' }), 1);
  t.equal(metrics.value('ussd_services_loaded', { service: 'shop', version: '1.0.0' }), 0, 'the old version: 0');
  t.equal(metrics.value('ussd_services_loaded', { service: 'builtin', version: '1.0.0' }), 1);
});

t.test('a reload on SIGHUP reads the directory again', async (t) => {
  const running = shop('hup-1', '+254711000006');
  t.match(await running.send(), /\(v1\.1\.0\)/);
  const taken = log.next(reloaded('SIGHUP'));
  const watched = log.next(reloaded('file change'));
  writeFileSync(join(dir, 'shop.yaml'), shopVersion('1.2.0'));
  // Before the file watch's debounce ends: the SIGHUP reload is the one that reads the new file.
  process.kill(process.pid, 'SIGHUP');
  t.match((await taken).services, ['builtin@1.0.0', 'shop@1.2.0']);
  await watched;
  t.match(await shop('hup-2', '+254711000006').send(), /\(v1\.2\.0\)/, 'new dials: 1.2.0');
  t.equal(await running.send('1'), await shop('hup-3', '+254711000006', SHOP_PRODUCTS_CODE).send());
  t.match(await running.send('1'), /How many\? \(1-50\)/, 'the running session stays on 1.1.0');
});

t.test('a broken reload is refused with a log line; the running versions stay', async (t) => {
  const broken = shopVersion('1.3.0').replace('next: placed', 'next: nowhere');
  const line = broken.split('\n').findIndex((text) => text.includes('next: nowhere')) + 1;
  const refusal = log.next(refused);
  writeFileSync(join(dir, 'shop.yaml'), broken);
  const entry = await refusal;
  t.equal(entry.level, 50, 'an error line');
  t.match(entry.msg, `${join(dir, 'shop.yaml')}:${line}: states.confirm.options.0.next: no state named "nowhere"`);
  t.match(await shop('broken-1', '+254711000007').send(), /\(v1\.2\.0\)/, 'new dials: still 1.2.0');
  t.match(await versions(), [{ id: 'builtin' }, { id: 'shop', version: '1.2.0' }]);

  // Other content under a version already published is refused too: a version is immutable.
  const clash = log.next(refused);
  writeFileSync(join(dir, 'shop.yaml'), shopVersion('1.2.0').replace('Ngapi?', 'Ngapi sasa?'));
  t.match((await clash).msg, /shop@1\.2\.0 is already published with other content/);
  t.match(await shop('broken-2', '+254711000007').send(), /\(v1\.2\.0\)/);

  const restored = log.next(reloaded('file change'));
  writeFileSync(join(dir, 'shop.yaml'), shopVersion('1.2.0'));
  await restored;
});

t.test('after a restart: the language choice and the versions are still there', async (t) => {
  await server.shutdown();
  server = await startTestServer(t, { env, dataDir, log: log.logger });
  t.match(await shop('restart-1', '+254711000003').send(), /^CON Karibu duka la Mama Mboga\n/, 'Swahili, remembered');
  t.match(await versions(), [
    { id: 'builtin', version: '1.0.0' },
    { id: 'shop', version: '1.2.0' },
  ]);
  t.equal((await scrape(server.url)).value('ussd_services_loaded', { service: 'shop', version: '1.2.0' }), 1);
});

t.test('an invalid definition at start: exit 78, each problem with its file and line', async (t) => {
  const bad = servicesDir(t, shopText().replace('sw: Karibu duka la Mama Mboga', 'fr: Bienvenue'));
  const line =
    shopText()
      .split('\n')
      .findIndex((text) => text.includes('Karibu duka la Mama Mboga')) + 1;
  const child = spawn(process.execPath, ['dist/src/app/main.js'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'sar-78-')),
      USSD_SERVICES_DIR: bad,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  const code = await new Promise((resolve) => child.once('exit', resolve));
  t.equal(code, 78, 'exit 78 (EX_CONFIG)');
  const file = join(bad, 'shop.yaml');
  t.match(stderr, `${file}:${line}: states.home.text: no sw text`);
  t.match(stderr, `${file}:${line}: states.home.text.fr: fr is not a language of this service`);
  t.notMatch(stderr, /\n\s+at /, 'no stack trace');
});
