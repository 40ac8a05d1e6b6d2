// The `ask` state through HTTP (docs/ussd-ask.md): a logged-in phone user's input is a chat turn to the oracle's
// built-in agent, answered on CON screens paged with More and Back, under the account's own did:key (its chat
// session and preferences: "call me Amina" on the phone is remembered on the next dial, and not by another account).
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test as Tap } from 'tap';
import { didKeyOf } from '../dist/src/oracle/auth/did.js';
import { openStore } from '../dist/src/store/env.js';
import { identityContext } from '../dist/src/ussd/account-secrets.js';
import { CustomerAccounts } from '../dist/src/ussd/actor/customer-accounts.js';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';
import { LmdbCustomerRepository } from '../dist/src/records/lmdb/ussd/customers.js';
import { ASK_MODELS, ASK_PIN, askService, dialAt } from './helpers/ussd-ask.js';
import { chunk, heldAnswer, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';
import { serviceDir } from './helpers/ussd-backend.js';
import { sharedTestServer } from './helpers/server.js';

const llm = await startLlmStandIn();
t.teardown(() => llm.close());
const server = sharedTestServer(t, {
  env: { USSD_SERVICES_DIR: serviceDir(t, askService()), LLM_BASE_URL: llm.baseUrl, ORACLE_MODELS: ASK_MODELS },
});

/** A new account made and logged in on `sessionId`: the text so far, and the customer ID. */
async function newAccount(url: string, sessionId: string, phone: string, name: string, agent = '1') {
  await dialAt(url, sessionId, '', phone);
  await dialAt(url, sessionId, '1', phone);
  await dialAt(url, sessionId, `1*${name}`, phone);
  const created = await dialAt(url, sessionId, `1*${name}*${ASK_PIN}`, phone);
  const customerId = /PIN for (C[0-9A-F]{8})/.exec(created.text)?.[1] ?? '';
  const loggedIn = `1*${name}*${ASK_PIN}*${ASK_PIN}`;
  await dialAt(url, sessionId, loggedIn, phone);
  const text = `${loggedIn}*${agent}`;
  const asked = await dialAt(url, sessionId, text, phone);
  return { text, customerId, screen: asked.text };
}

/** Logs an existing account in on a new dial: the text so far. */
async function logIn(
  t: Tap,
  url: string,
  sessionId: string,
  phone: string,
  customerId: string,
  agent = '1',
  screen = /^CON Ask /,
) {
  await dialAt(url, sessionId, '', phone);
  await dialAt(url, sessionId, '2', phone);
  await dialAt(url, sessionId, `2*${customerId}`, phone);
  await dialAt(url, sessionId, `2*${customerId}*${ASK_PIN}`, phone);
  const text = `2*${customerId}*${ASK_PIN}*${agent}`;
  t.match((await dialAt(url, sessionId, text, phone)).text, screen);
  return text;
}

t.test('a long answer of the built-in agent is paged with More and Back', async (t) => {
  const { url } = await server();
  const phone = '+254700000071';
  const session = `ask-page-${process.pid}`;
  const account = await newAccount(url, session, phone, 'Baraka');
  t.equal(account.screen, 'CON Ask me anything:\n0. Back\n00. Home', 'a logged-in user lands on the ask prompt');

  const question = 'What should I plant after the long rains this year';
  const first = await dialAt(url, session, `${account.text}*${question}`, phone);
  t.match(first.text, /^CON Hello! I'm the built-in assistant of this oracle\. You said:/, 'the agent answers');
  t.match(first.text, /\n98\. More\n0\. Back\n00\. Home$/, 'the first page offers More');
  t.ok(first.text.length <= 182, `page 1 fits (${first.text.length})`);
  t.equal(
    (await dialAt(url, session, `${account.text}*${question}`, phone)).text,
    first.text,
    'a retry: the same page',
  );

  const pages = [first.text];
  let text = `${account.text}*${question}`;
  for (let more = 0; more < 5 && pages.at(-1)?.includes('\n98. More'); more++) {
    text += '*98';
    pages.push((await dialAt(url, session, text, phone)).text);
  }
  t.ok(pages.length >= 2, `the answer takes ${pages.length} pages`);
  for (const page of pages) t.ok(page.length <= 182, `every page fits (${page.length})`);
  t.match(pages.at(-1), /\n0\. Back\n00\. Home$/, 'a later page offers Back');
  const body = pages
    .map((page) =>
      page
        .slice(4)
        .split('\n')
        .filter((line) => !/^(98|0|00)\. /.test(line))
        .join(' '),
    )
    .join(' ');
  t.match(body, `You said: "${question}".`, 'the pages hold the whole answer, in order');
  t.match(body, /and I will remember it\.$/);
  text += '*0';
  t.equal((await dialAt(url, session, text, phone)).text, pages.at(-2), 'Back shows the page before');
});

t.test('each account speaks as its own did:key: preferences set from the phone stay with it', async (t) => {
  const { url } = await server();
  const phone = '+254700000072';
  const first = `ask-did-1-${process.pid}`;
  const amina = await newAccount(url, first, phone, 'Amina');
  const saved = await dialAt(url, first, `${amina.text}*call me Amina`, phone);
  t.match(saved.text, /^CON Done: I'll call you Amina from now on\./, 'set_user_preferences ran from the phone');

  // A new dial of the same number, logged in again: the same identity, so the agent knows the name.
  const second = `ask-did-2-${process.pid}`;
  const text = await logIn(t, url, second, phone, amina.customerId);
  t.match((await dialAt(url, second, `${text}*hello`, phone)).text, /^CON Hello Amina! /, 'remembered on a new dial');

  // Another account (the same phone even): another identity, with none of Amina's preferences.
  const third = `ask-did-3-${process.pid}`;
  const other = await newAccount(url, third, phone, 'Juma');
  t.match((await dialAt(url, third, `${other.text}*hello`, phone)).text, /^CON Hello! I'm /, 'another account');
});

t.test('an account gets an Ed25519 did:key, its key encrypted like the PIN; older accounts at first use', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sar-ask-ids-'));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const cipher = new PinCipher(randomBytes(32));
  const repository = new LmdbCustomerRepository(store);
  const accounts = new CustomerAccounts(repository, cipher, { pinLockMinutes: 30 });

  const made = await accounts.create({ fullName: 'Neema', phoneNumber: '+254700000073', pin: ASK_PIN }, Date.now());
  t.match(made.did, /^did:key:z6Mk/, 'made with the account');
  t.notOk('identityKey' in made, 'the private key never leaves the accounts');
  t.equal(await accounts.identity(made.customerId), made.did, 'the same identity at every use');
  const record = (await repository.get(made.customerId))!.value;
  t.notOk(cipher.opens(record.identityKey!, made.customerId), "the PIN's context does not open it");
  const key = decrypt(cipher, record.identityKey!, made.customerId);
  t.equal(didKeyOf(rawPublicKey(key)), made.did, 'the stored key is the did:key of the account');

  // An account stored before identities existed: no did until it first asks.
  const { did: _did, identityKey: _key, ...old } = record;
  await repository.create({ ...old, customerId: 'C0000A5C0' });
  t.equal((await repository.get('C0000A5C0'))!.value.did, undefined);
  const given = await accounts.identity('C0000A5C0');
  t.match(given, /^did:key:z6Mk/, 'given at first use');
  t.not(given, made.did);
  t.equal((await repository.get('C0000A5C0'))!.value.did, given, 'and stored');
  t.equal(await accounts.identity('C0000A5C0'), given);
  t.equal(await accounts.identity('C0000FFFF'), undefined, 'none for an unknown account');
});

/** The identity's private key, decrypted as the accounts would (PKCS#8 DER, base64url). */
function decrypt(cipher: PinCipher, stored: string, customerId: string) {
  const plain = cipher.decrypt(stored, identityContext(customerId));
  if (plain === undefined) throw new Error('the identity key does not open with its context');
  return createPrivateKey({ key: Buffer.from(plain, 'base64url'), format: 'der', type: 'pkcs8' });
}

function rawPublicKey(privateKey: ReturnType<typeof createPrivateKey>): Uint8Array {
  return Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x ?? '', 'base64url');
}

t.test('a slow provider: "still working" within the budget, then the answer at the next input', async (t) => {
  const { url } = await server();
  const phone = '+254700000074';
  const session = `ask-slow-${process.pid}`;
  const account = await newAccount(url, session, phone, 'Wanjiru', '2');
  t.equal(account.screen, 'CON Ask the slow one:\n0. Back\n00. Home');
  const held = heldAnswer('Plant beans now, ');
  llm.script(held.responder);
  const asked = await dialAt(url, session, `${account.text}*when to plant`, phone);
  t.equal(
    asked.text,
    'CON Still working on it. Send any key to see the answer.\n0. Back\n00. Home',
    'working, in time',
  );
  t.ok(asked.ms < 2000, `answered in ${Math.round(asked.ms)} ms (budget 300 ms)`);
  await held.running;
  const request = llm.requests.at(-1);
  t.equal(request?.body.model, 'stand-in', "the state's model, through the provider's real protocol");
  t.match(request?.body.messages.at(-1), { role: 'user', content: 'when to plant' });
  // Still running: another input shows the same screen; the question is not asked twice.
  let text = `${account.text}*when to plant*1`;
  t.equal((await dialAt(url, session, text, phone)).text, asked.text, 'still working at the next input');
  held.release();
  // The answer reaches the session when the turn ends: the next inputs show it once it is there.
  let shown = '';
  for (let attempt = 0; attempt < 100 && !shown.startsWith('CON Plant'); attempt++) {
    text += '*1';
    shown = (await dialAt(url, session, text, phone)).text;
    if (!shown.startsWith('CON Plant')) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.equal(shown, 'CON Plant beans now, and the rest.\n0. Back\n00. Home', 'the answer at the next input');
  t.equal(llm.requests.filter((r) => r.url === '/v1/chat/completions').length, 1, 'one model call');
  text += '*what next';
  llm.script(sse([chunk({ content: 'Weed in May.' }, 'stop')]));
  t.equal(
    (await dialAt(url, session, text, phone)).text,
    'CON Weed in May.\n0. Back\n00. Home',
    'a fast answer in time',
  );
});

/** Inputs on the ask state (`text` so far, one more key each) until the answer shows: the text and the screen. */
async function untilShown(url: string, session: string, phone: string, text: string, answer: string, shown = '') {
  for (let attempt = 0; attempt < 50 && !shown.startsWith(answer); attempt++) {
    text += '*1';
    shown = (await dialAt(url, session, text, phone)).text;
  }
  return { text, shown };
}

t.test('a slow answer the user hung up on shows at the next dial, once', async (t) => {
  const { url } = await server();
  const phone = '+254700000075';
  const first = `ask-redial-1-${process.pid}`;
  const account = await newAccount(url, first, phone, 'Otieno', '2');
  const held = heldAnswer('Sell the maize in July, ');
  llm.script(held.responder);
  const asked = await dialAt(url, first, `${account.text}*when to sell`, phone);
  t.match(asked.text, /^CON Still working/, 'working; the user hangs up');
  await held.running;

  // A new dial, logged in again while the turn runs: the ask state waits for that turn (the account keeps it).
  const second = `ask-redial-2-${process.pid}`;
  const entered = await logIn(t, url, second, phone, account.customerId, '2', /^CON Still working/);
  t.pass('the new dial waits for the turn asked on the first');
  held.release();
  const { text, shown } = await untilShown(url, second, phone, entered, 'CON Sell');
  t.equal(shown, 'CON Sell the maize in July, and the rest.\n0. Back\n00. Home', 'the answer on the next dial');
  await dialAt(url, second, `${text}*0`, phone);
  t.equal((await dialAt(url, second, `${text}*0*2`, phone)).text, 'CON Ask the slow one:\n0. Back\n00. Home', 'once');
  t.equal(llm.requests.filter((r) => r.body?.messages?.at(-1)?.content === 'when to sell').length, 1, 'asked once');
  // The first session still waited: its next input shows the answer too (its own copy), asking nothing.
  const late = await dialAt(url, first, `${account.text}*when to sell*1`, phone);
  t.equal(late.text, shown, 'the first session, still live, shows its own copy');

  // Hung up again on a slow answer that ends before the next dial: that dial's ask state shows it, once.
  const slower = heldAnswer('Dry it well, ');
  llm.script(slower.responder);
  const again = await dialAt(url, first, `${account.text}*when to sell*1*how to store`, phone);
  t.match(again.text, /^CON Still working/, 'working again');
  await slower.running;
  slower.release();
  const third = `ask-redial-3-${process.pid}`;
  await logIn(t, url, third, phone, account.customerId, '2', /^CON (Dry|Still working)/);
  const entering = `2*${account.customerId}*${ASK_PIN}*2`;
  const retried = (await dialAt(url, third, entering, phone)).text; // a retry: the screen the step committed
  const dry = await untilShown(url, third, phone, entering, 'CON Dry', retried);
  t.equal(dry.shown, 'CON Dry it well, and the rest.\n0. Back\n00. Home', 'the second answer on the third dial');
  await dialAt(url, third, `${dry.text}*0`, phone);
  t.equal(
    (await dialAt(url, third, `${dry.text}*0*2`, phone)).text,
    'CON Ask the slow one:\n0. Back\n00. Home',
    'once',
  );
});
