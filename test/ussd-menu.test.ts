// The whole USSD menu tree against a real LMDB store, driven like a gateway drives it: one request per
// input with the `*`-joined history in `text`.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../dist/src/store/env.js';
import { CustomerAccounts } from '../dist/src/ussd/actor/customer-accounts.js';
import { LmdbCustomerRepository } from '../dist/src/records/lmdb/ussd/customers.js';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';
import {
  answer,
  applyInput,
  ENDED_STATE,
  MAX_SCREEN,
  STATE_NAMES,
  welcome,
} from '../dist/src/ussd/actor/menu/index.js';

const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);
const MINUTE = 60_000;
const PHONE = '+254712345678';
const PIN = '48213';
const NEW_PIN = '70395';
/** Every PIN typed in this file: none may ever appear in a session record. */
const TYPED_PINS = [PIN, NEW_PIN, '33333', '35791', '24680', '97531', '13579', '86420'];

const clock = { now: T0 };
const dataDir = mkdtempSync(join(tmpdir(), 'ussd-menu-'));
const store = openStore(dataDir);
const pinCipher = new PinCipher(randomBytes(32));
const customers = new CustomerAccounts(new LmdbCustomerRepository(store), pinCipher, { pinLockMinutes: 30 });
const deps = { customers, pinCipher, now: () => clock.now, sessionTtlSeconds: 300 };
t.teardown(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every screen any test saw, by the state it left the session in. */
const seen = new Map<string, number>();
let sessionCount = 0;

/** A phone in a USSD session: keeps the gateway's text history and checks every answer. */
async function dial(t: any, phoneNumber = PHONE) {
  const sessionId = `ATUid_${++sessionCount}`;
  const inputs: string[] = [];
  const request = () => ({ sessionId, phoneNumber, serviceCode: '*384*12#', text: inputs.join('*') });
  let step = await answer(undefined, request(), deps);
  const check = () => {
    const { session, screen } = step;
    if (!/^(CON|END) /.test(screen) || screen.length > MAX_SCREEN)
      t.fail(`bad screen in ${session.state}: ${JSON.stringify(screen)}`);
    t.equal(session.context.message, screen.slice(4), 'context.message is the screen text');
    seen.set(session.state, Math.max(seen.get(session.state) ?? 0, screen.length));
    // Customer IDs (C and 8 random hex digits) left out: one may hold five equal digits by chance ('33333').
    const record = JSON.stringify(session).replaceAll(/C[0-9A-F]{8}/g, '');
    for (const pin of TYPED_PINS)
      if (record.includes(pin)) t.fail(`PIN ${pin} in the session record (${session.state})`);
    t.same(
      Object.keys(session.context).filter(
        (k) => !['sessionId', 'phoneNumber', 'message', 'isAuthenticated', 'customerId'].includes(k),
      ),
      [],
    );
  };
  check();
  return {
    get session() {
      return step.session;
    },
    get screen() {
      return step.screen;
    },
    get state() {
      return step.session.state;
    },
    get ended() {
      return step.ended;
    },
    async send(input: string) {
      inputs.push(input);
      step = await answer(step.session, request(), deps);
      check();
      return step.screen;
    },
    /** The gateway sends the last request again. */
    async retry() {
      const again = await answer(step.session, request(), deps);
      t.ok(again.retry, 'recognised as a retry');
      return again;
    },
  };
}

async function createAccount(t: any, opts: { name?: string; email?: string; phone?: string; pin?: string } = {}) {
  const phone = await dial(t, opts.phone);
  await phone.send('2');
  await phone.send('2');
  await phone.send(opts.name ?? 'Amina Otieno');
  await phone.send(opts.email ?? '00');
  await phone.send(opts.pin ?? PIN);
  await phone.send(opts.pin ?? PIN);
  t.equal(phone.state, 'createDone');
  const id = /Your customer ID: (C[0-9A-F]{8})/.exec(phone.screen)?.[1];
  t.ok(id, 'the customer ID is on screen');
  return { phone, customerId: id! };
}

async function logIn(t: any, customerId: string, pin = PIN) {
  const phone = await dial(t);
  await phone.send('2');
  await phone.send('1');
  await phone.send(customerId);
  await phone.send(pin);
  return phone;
}

t.test('a dial opens the welcome menu in preMenu', async (t) => {
  const phone = await dial(t);
  t.match(phone.screen, /^CON /);
  t.match(phone.screen, /1\. Know More\n2\. Account Menu\n\*\. Exit$/);
  t.equal(phone.state, 'preMenu');
  t.same(phone.session.context, {
    sessionId: 'ATUid_1',
    phoneNumber: PHONE,
    message: phone.screen.slice(4),
    isAuthenticated: false,
  });
  t.equal(phone.session.expiresAt, T0 + 300_000);
  t.notOk(phone.ended);
});

t.test('Know More: each item has its own screen; 0 goes back, 00 home, * exits where offered', async (t) => {
  const phone = await dial(t);
  const knowMore = await phone.send('1');
  t.equal(phone.state, 'knowMore');
  t.match(knowMore, /About this service[\s\S]*Pricing[\s\S]*Delivery[\s\S]*0\. Back\n\*\. Exit$/);
  for (const [choice, state, title] of [
    ['1', 'about', 'About this service'],
    ['2', 'pricing', 'Pricing'],
    ['3', 'delivery', 'Delivery'],
  ]) {
    const screen = await phone.send(choice);
    t.equal(phone.state, state);
    t.match(screen, new RegExp(`^CON ${title}\\n[\\s\\S]+\\n0\\. Back\\n00\\. Home$`));
    t.equal(await phone.send('0'), knowMore, 'back to Know More');
  }
  await phone.send('2');
  const star = await phone.send('*');
  t.equal(phone.state, 'pricing', '* is an ordinary input where Exit is not offered');
  t.match(star, /^CON Invalid choice\.\nPricing\n/);
  await phone.send('00');
  t.equal(phone.state, 'preMenu');
  await phone.send('1');
  const end = await phone.send('*');
  t.match(end, /^END .*Goodbye!/);
  t.ok(phone.ended);
  t.equal(phone.state, ENDED_STATE);
});

t.test('Exit on the welcome menu ends the session with END', async (t) => {
  const phone = await dial(t);
  t.match(await phone.send('*'), /^END Thank you/);
  t.ok(phone.ended);
  t.equal((await applyInput(phone.session, '1', deps)).screen, phone.screen, 'an ended session only repeats its END');
});

t.test('invalid choices re-show the menu with a short notice', async (t) => {
  const phone = await dial(t);
  const welcomeScreen = phone.screen.slice(4);
  for (const input of ['9', '', '0', '00', '**', '1*1', 'hello', 'x'.repeat(182)]) {
    t.equal(
      await phone.send(input),
      `CON Invalid choice.\n${welcomeScreen}`,
      `input ${JSON.stringify(input.slice(0, 10))}`,
    );
    t.equal(phone.state, 'preMenu');
  }
  await phone.send('2');
  t.match(await phone.send('7'), /^CON Invalid choice\.\nAccount Menu\n/);
  t.match(await phone.send('*'), /^CON Invalid choice\./, 'Account Menu offers no Exit');
  t.equal(phone.state, 'accountMenu');
  await phone.send('0');
  t.equal(phone.state, 'preMenu');
});

t.test('a * typed earlier does not make later inputs an Exit', async (t) => {
  const phone = await dial(t);
  await phone.send('2');
  await phone.send('2');
  t.match(await phone.send('*'), /^CON Name: 2-60 letters/);
  t.equal(phone.state, 'createName');
  await phone.send('Wanjiru Kamau');
  t.equal(phone.state, 'createEmail', 'the next input is read normally');
});

t.test('create account: name, email, PIN rules, confirmation, new customer ID', async (t) => {
  const phone = await dial(t, '+254700398157');
  await phone.send('2');
  t.match(await phone.send('2'), /^CON Enter your full name:\n0\. Back$/);
  for (const bad of ['A', 'J0hn Doe', 'x'.repeat(61), 'Amina_Otieno', '  ', "'Amina", '12345']) {
    t.match(
      await phone.send(bad),
      /^CON Name: 2-60 letters; spaces, ' and - allowed\.\nEnter your full name:/,
      `name ${bad.slice(0, 10)}`,
    );
    t.equal(phone.state, 'createName');
  }
  t.match(await phone.send("  Zoë   O'Brien-Njoroge "), /^CON Enter your email address, or 00 to skip:/);
  t.same(phone.session.pending, { fullName: "Zoë O'Brien-Njoroge" });
  t.match(await phone.send('not-an-email'), /^CON That email address is not valid\.\nEnter your email/);
  t.match(await phone.send('zoe@'), /not valid/);
  await phone.send('zoe@example.org');
  t.equal(phone.state, 'createPin');
  for (const weak of ['12345', '54321', '11111', '00000', '01234', '98765']) {
    t.match(
      await phone.send(weak),
      /^CON PIN too easy to guess\. Avoid repeated or sequential digits like 11111 or 12345\.\nChoose a 5-digit PIN:/,
      `weak ${weak}`,
    );
    t.equal(phone.state, 'createPin');
  }
  for (const bad of ['1234', '123456', 'abcde', '1234*', '']) {
    t.match(await phone.send(bad), /^CON PIN must be exactly 5 digits\./, `format ${bad}`);
  }
  t.match(await phone.send('98157'), /^CON PIN must not be the end of your phone number\./);
  t.match(await phone.send(PIN), /^CON Enter the same PIN again to confirm:/);
  t.match(phone.session.pending!.pin!, /^v1\./, 'the PIN waiting for confirmation is encrypted');
  t.match(await phone.send('35791'), /^CON PINs do not match\. Try again\.\nChoose a 5-digit PIN:/);
  t.equal(phone.state, 'createPin');
  t.notOk(phone.session.pending?.pin, 'the unconfirmed PIN is dropped');
  await phone.send(PIN);
  const done = await phone.send(PIN);
  t.match(done, /^CON Account created!\nYour customer ID: C[0-9A-F]{8}\n/);
  t.match(done, /1\. Log in\n00\. Home\n\*\. Exit$/);
  const customerId = /C[0-9A-F]{8}/.exec(done)![0];
  const account = await customers.get(customerId);
  t.same(account, {
    customerId,
    fullName: "Zoë O'Brien-Njoroge",
    email: 'zoe@example.org',
    phoneNumber: '+254700398157',
    failedPinAttempts: 0,
    createdAt: T0,
    did: account?.did,
  });
  t.match(account?.did, /^did:key:z6Mk/, 'the account has its did:key');
  t.notOk(phone.session.context.isAuthenticated, 'creating an account does not log in');
  t.match(await phone.send('*'), new RegExp(`^END Your customer ID is ${customerId}\\. Keep it safe\\. Goodbye!$`));
});

t.test('create account: 00 skips the email; 0 goes back one step', async (t) => {
  const phone = await dial(t);
  await phone.send('2');
  await phone.send('2');
  await phone.send('Amina Otieno');
  await phone.send('amina@example.org');
  t.equal(phone.state, 'createPin');
  await phone.send('0');
  t.equal(phone.state, 'createEmail');
  t.same(phone.session.pending, { fullName: 'Amina Otieno' }, 'going back drops the email to re-enter');
  await phone.send('00');
  t.equal(phone.state, 'createPin', '00 on the email screen skips, it is not Home');
  await phone.send(PIN);
  await phone.send('0');
  t.equal(phone.state, 'createPin');
  await phone.send('0');
  await phone.send('0');
  t.equal(phone.state, 'createName');
  await phone.send('0');
  t.equal(phone.state, 'accountMenu');
  t.equal(phone.session.pending, undefined, 'the draft is gone');
  await phone.send('2');
  await phone.send('Amina Otieno');
  await phone.send('00');
  await phone.send(PIN);
  await phone.send(PIN);
  const customerId = /C[0-9A-F]{8}/.exec(phone.screen)![0];
  t.notOk('email' in (await customers.get(customerId))!, 'no email stored when skipped');
  t.match(await phone.send('1'), /^CON Enter your 5-digit PIN:/, '"Log in" after creation asks only for the PIN');
  t.equal(phone.state, 'loginPin');
  t.match(await phone.send(PIN), /^CON Hello Amina\n1\. Account details\n2\. Change PIN\n3\. Log out\n00\. Home$/);
  t.same(phone.session.context, {
    sessionId: phone.session.sessionId,
    phoneNumber: PHONE,
    message: phone.screen.slice(4),
    isAuthenticated: true,
    customerId,
  });
});

t.test('log in: ID and PIN checks, wrong PIN says attempts left, success opens the services menu', async (t) => {
  const { customerId } = await createAccount(t, { name: 'Baraka Mwangi' });
  const phone = await dial(t);
  await phone.send('2');
  t.match(await phone.send('1'), /^CON Enter your customer ID/);
  t.match(await phone.send('12'), /^CON Customer IDs are C and 8 characters, like C1A2B3C4D\./);
  const unknown = customerId === 'C00000000' ? 'C00000001' : 'C00000000';
  t.match(await phone.send(unknown), new RegExp(`^CON No account with ID ${unknown}\\.`));
  t.equal(phone.state, 'loginId');
  await phone.send(customerId.toLowerCase());
  t.equal(phone.state, 'loginPin', 'IDs are accepted in lower case');
  t.match(await phone.send('1234'), /^CON PIN must be exactly 5 digits\./);
  t.equal((await customers.get(customerId))!.failedPinAttempts, 0, 'a malformed PIN is not an attempt');
  t.match(await phone.send('33333'), /^CON Wrong PIN\. 2 attempts left\.\nEnter your 5-digit PIN:/);
  const retried = await phone.retry();
  t.equal(retried.screen, phone.screen, 'a gateway retry gets the same screen');
  t.equal((await customers.get(customerId))!.failedPinAttempts, 1, 'and is not applied twice');
  t.match(await phone.send('33333'), /^CON Wrong PIN\. 1 attempt left\./);
  t.match(await phone.send(PIN), /^CON Hello Baraka\n/);
  t.equal(phone.state, 'services');
  t.equal(phone.session.context.isAuthenticated, true);
  t.equal(phone.session.context.customerId, customerId);
  t.equal((await customers.get(customerId))!.failedPinAttempts, 0, 'success resets the counter');
});

t.test('three wrong PINs lock the account across sessions until the lock expires', async (t) => {
  const { customerId } = await createAccount(t, { name: 'Chidi Okeke' });
  const first = await dial(t);
  await first.send('2');
  await first.send('1');
  await first.send(customerId);
  await first.send('33333');
  await first.send('35791');
  t.match(first.screen, /1 attempt left/);
  // A new dial does not reset the count: the third wrong PIN, in another session, locks.
  const second = await dial(t);
  await second.send('2');
  await second.send('1');
  t.match(await second.send(customerId), /^CON Enter your 5-digit PIN:/);
  t.match(
    await second.send('24680'),
    /^CON Too many wrong PINs\. Account locked\. Try again in 30 min \(09:30 UTC\)\.\nAccount Menu\n/,
  );
  t.equal(second.state, 'accountMenu');
  t.match(
    await first.send(PIN),
    /^CON Account locked\. Try again in 30 min \(09:30 UTC\)\./,
    'even the right PIN, in the first session',
  );
  t.equal(first.state, 'accountMenu');
  t.notOk(first.session.context.isAuthenticated);
  clock.now += 10 * MINUTE;
  const third = await dial(t);
  await third.send('2');
  await third.send('1');
  t.match(
    await third.send(customerId),
    /^CON Account locked\. Try again in 20 min \(09:30 UTC\)\.\nAccount Menu\n/,
    'locked already at the ID',
  );
  clock.now += 20 * MINUTE;
  const later = await logIn(t, customerId);
  t.equal(later.state, 'services', 'the lock expires by itself');
  clock.now = T0;
});

t.test('a lock that ends on another day shows the date', async (t) => {
  const { customerId } = await createAccount(t, { name: 'Dede Mensah' });
  clock.now = Date.UTC(2026, 0, 15, 23, 50);
  const phone = await logIn(t, customerId, '33333');
  await phone.send('35791');
  t.match(await phone.send('24680'), /Try again in 30 min \(2026-01-16 00:20 UTC\)\./);
  clock.now = T0;
});

t.test('services: account details, change PIN, log out', async (t) => {
  const { customerId } = await createAccount(t, { name: 'Esi Boateng', email: 'esi@example.org' });
  const phone = await logIn(t, customerId);
  const details = await phone.send('1');
  t.equal(
    details,
    `CON Account details\nID: ${customerId}\nName: Esi Boateng\nPhone: ${PHONE}\nEmail: esi@example.org\n0. Back\n00. Home`,
  );
  await phone.send('0');
  t.equal(phone.state, 'services');

  t.match(await phone.send('2'), /^CON Enter your current PIN:/);
  t.match(await phone.send('33333'), /^CON Wrong PIN\. 2 attempts left\.\nEnter your current PIN:/);
  await phone.send(PIN);
  t.equal(phone.state, 'changePinNew');
  t.match(phone.session.pending!.oldPin!, /^v1\./);
  t.match(await phone.send('11111'), /^CON PIN too easy to guess/);
  t.match(await phone.send(PIN), /^CON The new PIN must differ from the current one\./);
  await phone.send(NEW_PIN);
  t.match(await phone.send('97531'), /^CON PINs do not match\. Try again\.\nEnter your new 5-digit PIN:/);
  t.equal(phone.state, 'changePinNew');
  await phone.send(NEW_PIN);
  t.match(await phone.send(NEW_PIN), /^CON Your PIN has been changed\.\nHello Esi\n/);
  t.equal(phone.session.pending, undefined, 'no PIN left in the draft');

  t.match(await phone.send('3'), /^END You are logged out\. Goodbye!$/);
  t.ok(phone.ended);
  t.equal(phone.session.context.isAuthenticated, false);
  t.notOk('customerId' in phone.session.context);

  t.equal((await logIn(t, customerId, PIN)).state, 'loginPin', 'the old PIN no longer works');
  t.equal((await logIn(t, customerId, NEW_PIN)).state, 'services', 'the new one does');
});

t.test('three wrong current PINs while changing it lock the account and log out', async (t) => {
  const { customerId } = await createAccount(t, { name: 'Fatou Diallo' });
  const phone = await logIn(t, customerId);
  await phone.send('2');
  await phone.send('33333');
  await phone.send('35791');
  t.match(
    await phone.send('24680'),
    /^END Too many wrong PINs\. Account locked\. Try again in 30 min \(09:30 UTC\)\. You are logged out\.$/,
  );
  t.equal(phone.session.context.isAuthenticated, false);
  clock.now += 30 * MINUTE;
  t.equal((await logIn(t, customerId)).state, 'services');
  clock.now = T0;
});

t.test('home keeps a customer logged in; services need a login', async (t) => {
  const { customerId } = await createAccount(t, { name: 'Gift Banda' });
  const phone = await logIn(t, customerId);
  await phone.send('00');
  t.equal(phone.state, 'preMenu');
  t.equal(phone.session.context.isAuthenticated, true);
  await phone.send('2');
  t.equal(phone.state, 'services', 'Account Menu leads straight to the services of a logged-in customer');
  await phone.send('2');
  await phone.send('0');
  t.equal(phone.state, 'services', 'back from the current-PIN screen');
  const forged = {
    ...phone.session,
    state: 'accountDetails',
    context: { ...phone.session.context, isAuthenticated: false },
  };
  const step = await applyInput(forged, '1', deps);
  t.equal(step.session.state, 'preMenu');
  t.match(step.screen, /^CON Please log in first\.\nWelcome/);
  const unknown = await applyInput({ ...phone.session, state: 'noSuchState' }, '1', deps);
  t.equal(unknown.session.state, 'preMenu', 'an unknown state falls back to the welcome menu');
});

t.test('gateways that send only the latest input are understood', async (t) => {
  let step = await welcome({ sessionId: 'latest-only', phoneNumber: PHONE, serviceCode: '*384#', text: '' }, deps);
  for (const [text, state] of [
    ['1', 'knowMore'],
    ['2', 'pricing'],
    ['0', 'knowMore'],
    ['3', 'delivery'],
  ] as const) {
    step = await answer(
      step.session,
      { sessionId: 'latest-only', phoneNumber: PHONE, serviceCode: '*384#', text },
      deps,
    );
    t.equal(step.session.state, state, `text ${text}`);
  }
});

t.test('every state fits 182 characters with the longest data and any input', async (t) => {
  const longName = `Nomvula-Thandiwe ${'Abcdefghij'.repeat(4)}O'Mahlangu`;
  const name = longName.slice(0, 60);
  t.equal(name.length, 60);
  const email = `${'a'.repeat(52)}@example.org`;
  t.equal(email.length, 64);
  const phone16 = '+254712345678901';
  const { customerId } = await createAccount(t, { name, email, phone: phone16, pin: '13579' });
  const create = ['2', '2', name, email, '86420', '86420'];
  const login = ['2', '1', customerId, '13579'];
  const paths: Record<string, string[]> = {
    preMenu: [],
    knowMore: ['1'],
    about: ['1', '1'],
    pricing: ['1', '2'],
    delivery: ['1', '3'],
    accountMenu: ['2'],
    createName: ['2', '2'],
    createEmail: create.slice(0, 3),
    createPin: create.slice(0, 4),
    createPinConfirm: create.slice(0, 5),
    createDone: create,
    loginId: ['2', '1'],
    loginPin: ['2', '1', customerId],
    services: login,
    accountDetails: [...login, '1'],
    changePinOld: [...login, '2'],
    changePinNew: [...login, '2', '13579'],
    changePinConfirm: [...login, '2', '13579', '97531'],
  };
  t.same(Object.keys(paths).sort(), [...STATE_NAMES].sort(), 'every state is walked');
  const probes = [
    '',
    ' ',
    '*',
    '**',
    '0',
    '00',
    '000',
    '1',
    '2',
    '3',
    '9',
    '#',
    '1*2',
    'x'.repeat(182),
    '\u0000',
    '💥',
    name,
    email,
    '11111',
    '1234',
  ];
  for (const [state, path] of Object.entries(paths)) {
    for (const probe of probes) {
      const phone = await dial(t, phone16);
      for (const input of path) await phone.send(input);
      t.equal(phone.state, state, `path to ${state}`);
      await phone.send(probe);
      t.ok(
        phone.screen.length <= MAX_SCREEN,
        `${state} + ${JSON.stringify(probe.slice(0, 8))}: ${phone.screen.length} characters`,
      );
    }
  }
  const details = await dial(t, phone16);
  for (const input of paths.accountDetails) await details.send(input);
  t.match(details.screen, /Name: Nomvula-Thandiwe Abcdefghij/);
  t.match(details.screen, /Email: a+/);
});

t.test('every state was seen, every screen within the limit', async (t) => {
  for (const state of [...STATE_NAMES, ENDED_STATE]) {
    t.ok(seen.has(state), `${state} seen`);
    t.ok((seen.get(state) ?? 0) <= MAX_SCREEN, `${state}: longest screen ${seen.get(state)} characters`);
  }
});
