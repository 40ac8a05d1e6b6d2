// Continue after a timeout (docs/ussd-resume.md) through Africa's Talking's route on a real server on LMDB: a
// sign-up left mid-way is offered on the next dial of its code and continues with what was typed, but never the
// PIN; "start again" and a finished sign-up leave nothing; past `withinSeconds`, for another phone or another
// service nothing is offered; a restart keeps the saved point. Then the store's expiry sweep and the checker.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { checkServiceText } from '../dist/src/ussd/services/check.js';
import { openLmdbResumePoints } from '../dist/src/records/lmdb/ussd/resume-points.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { tempStore } from './helpers/store.js';
import { GatewaySession } from './helpers/ussd-gateway.js';

const SIGNUP = readFileSync('test/fixtures/ussd-services/signup.yaml', 'utf8');
/** The same sign-up on *601#, offered for one second only. */
const QUICK = SIGNUP.replace('id: signup', 'id: quick')
  .replace("['*600#']", "['*601#']")
  .replace('withinSeconds: 300', 'withinSeconds: 1');
const WELCOME = 'CON Sign-up. Choose:\n1. Sign up\n*. Exit';
const OFFER = 'CON You left your sign-up unfinished.\n1. Continue\n2. Start again';

const dir = mkdtempSync(join(tmpdir(), 'sar-resume-services-'));
const dataDir = mkdtempSync(join(tmpdir(), 'sar-resume-data-'));
t.teardown(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});
writeFileSync(join(dir, 'signup.yaml'), SIGNUP);
writeFileSync(join(dir, 'quick.yaml'), QUICK);
const env = { USSD_SERVICES_DIR: dir };
let server: TestServer;
t.before(async () => {
  server = await startTestServer(t, { env, dataDir });
});

let ids = 0;
const dial = (phone: string, code = '*600#') => new GatewaySession(server.url, `resume-${++ids}`, phone, code);

/** A sign-up left at the town prompt: the name typed. */
async function leftAtTown(t: Test, phone: string, code = '*600#'): Promise<GatewaySession> {
  const s = dial(phone, code);
  t.equal(await s.send(), WELCOME);
  await s.send('1');
  t.equal(await s.send('Amina Juma'), 'CON Hi Amina Juma. Your town:\n0. Back');
  return s;
}

t.test('a redial continues where the user left, with the values typed, but asks for the PIN again', async (t) => {
  const phone = '+254722000001';
  const first = await leftAtTown(t, phone);
  t.equal(await first.send('Moshi'), 'CON Choose a 5-digit PIN:');
  t.equal(await first.send('24680'), 'CON The same PIN again:', 'the PIN typed, then the gateway times out');
  // Africa's Talking says the session ended on a CON.
  const notice = await fetch(`${server.url}/api/ussd/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ sessionId: first.sessionId, status: 'Incomplete', phoneNumber: phone }).toString(),
  });
  t.same(await notice.json(), { recorded: true });

  const again = dial(phone);
  t.equal(await again.send(), OFFER, 'offered to continue');
  t.equal(await again.send('7'), `CON Invalid choice.\n${OFFER.slice(4)}`, 'another key: the offer again');
  t.equal(await again.send('1'), 'CON Choose a 5-digit PIN:', 'at the PIN prompt: the PIN was not kept');
  t.equal(await again.send('13579'), 'CON The same PIN again:');
  t.match(await again.send('13579'), /^END Welcome Amina Juma of Moshi\. Your ID: C[0-9A-F]{8}$/, 'the values typed');
  t.equal(await dial(phone).send(), WELCOME, 'finished: nothing left to continue');
});

t.test('start again starts fresh and leaves nothing; another phone or service is not offered', async (t) => {
  const phone = '+254722000002';
  await leftAtTown(t, phone);
  t.equal(await dial('+254722000003').send(), WELCOME, 'another phone number: not offered');
  t.equal(await dial(phone, '*601#').send(), WELCOME, 'another service: not offered');
  const again = dial(phone);
  t.equal(await again.send(), OFFER);
  t.equal(await again.send('2'), WELCOME, 'start again: the start');
  t.equal(await dial(phone).send(), WELCOME, 'declined: not offered again');
});

t.test('a dial after withinSeconds starts fresh', async (t) => {
  const phone = '+254722000004';
  await leftAtTown(t, phone, '*601#');
  await sleep(1_050); // quick offers for one second: time itself is what this test waits for
  t.equal(await dial(phone, '*601#').send(), WELCOME, 'past the time: fresh');
});

t.test('a restart of the server in between still offers it', async (t) => {
  const phone = '+254722000005';
  await leftAtTown(t, phone);
  await server.shutdown();
  server = await startTestServer(t, { env, dataDir });
  const again = dial(phone);
  t.equal(await again.send(), OFFER, 'offered after the restart');
  t.equal(await again.send('1'), 'CON Hi Amina Juma. Your town:\n0. Back', 'at the town prompt, the name kept');
});

t.test('the sweep removes expired points only, by their expiry index', async (t) => {
  const points = openLmdbResumePoints(tempStore(t));
  const point = (savedAt: number, withinMs: number) => ({
    version: '1.0.0',
    state: 'askTown',
    values: { fullName: 'Amina' },
    savedAt,
    expiresAt: savedAt + withinMs,
  });
  const now = 10 * 60_000;
  await points.write('signup', '+1', point(now - 300_000, 60_000));
  await points.write('signup', '+2', point(now - 1_000, 300_000));
  await points.write('signup', '+3', point(now - 200_000, 60_000));
  await points.write('signup', '+3', point(now - 1_000, 60_000)); // moved on: its old index entry goes
  t.equal(await points.removeExpired(now), 1);
  t.equal(points.get('signup', '+1'), undefined);
  t.ok(points.get('signup', '+2'));
  t.ok(points.get('signup', '+3'));
  t.equal(await points.removeExpired(now + 3_600_000), 2, 'later, the others');
  t.equal(await points.removeExpired(now + 3_600_000), 0);
});

t.test('the checker: every text of the offer in every language, and its screen fits', async (t) => {
  const untranslated = SIGNUP.replace(
    "restart: { key: '2', text: { en: Start again, sw: Anza upya } }",
    "restart: { key: '2', text: { en: Start again } }",
  );
  t.match(checkServiceText(untranslated, 'signup.yaml').problems, [
    { path: 'resume.restart.text', message: 'no sw text' },
  ]);
  const long = SIGNUP.replace('You left your sign-up unfinished.', 'x'.repeat(300));
  t.match(checkServiceText(long, 'signup.yaml').problems, [{ path: 'resume', message: /over the limit of 182/ }]);
  const clash = SIGNUP.replace("restart: { key: '2'", "restart: { key: '1'");
  t.match(checkServiceText(clash, 'signup.yaml').problems, [{ path: 'resume.restart.key' }]);
  t.same(checkServiceText(SIGNUP, 'signup.yaml').problems, []);
});
