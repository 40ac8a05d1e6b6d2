// The playground in a real Chromium: a USSD account created on the phone, a streamed chat turn, a browser tool
// call answered by the page, and the dashboard under a small load. One browser, one page; screenshots are
// kept in test-artifacts/.
import t from 'tap';
import type { Page } from 'playwright-core';
import { artifactPath, launchBrowser } from './helpers/browser.js';
import { startTestServer } from './helpers/server.js';
import { docExampleDir } from './helpers/ussd-doc-example.js';

// OPERATOR_TOKEN set: the dashboard must ask for it (loopback alone is not enough then).
const OPERATOR_TOKEN = 'playground-operator-secret';
// Two USSD services: the built-in one and the example of docs/ussd-services.md.
const server = await startTestServer(t, { env: { OPERATOR_TOKEN, USSD_SERVICES_DIR: docExampleDir(t) } });
const browser = await launchBrowser(t);
const page: Page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
const pageErrors: string[] = [];
page.on('pageerror', (error) => pageErrors.push(error.message));
page.on('console', (message) => {
  if (message.type() === 'error') pageErrors.push(`${message.text()} (${message.location().url})`);
});
await page.goto(`${server.url}/playground`);

const byTestId = (id: string) => page.getByTestId(id);

async function screenText(): Promise<string> {
  return (await byTestId('ussd-screen').textContent()) ?? '';
}

/** Types an answer on the phone and sends it (Enter: the form works from the keyboard). */
async function answer(text: string, expected: RegExp): Promise<void> {
  await byTestId('ussd-input').fill(text);
  await byTestId('ussd-input').press('Enter');
  await page.waitForFunction(
    ([source, flags]) =>
      new RegExp(source, flags).test(document.querySelector('[data-testid="ussd-screen"]')?.textContent ?? ''),
    [expected.source, expected.flags] as const,
  );
}

/** Holds the page's `tool_result` frames (the page answers at once otherwise) until releaseToolResults(). */
async function holdToolResults(): Promise<void> {
  await page.evaluate(() => {
    const send = WebSocket.prototype.send;
    const held: (() => void)[] = [];
    WebSocket.prototype.send = function (data) {
      if (String(data).includes('"tool_result"')) held.push(() => send.call(this, data));
      else send.call(this, data);
    };
    (window as unknown as { release(): void }).release = () => {
      WebSocket.prototype.send = send;
      for (const answer of held.splice(0)) answer();
    };
  });
}

async function releaseToolResults(): Promise<void> {
  await page.evaluate(() => (window as unknown as { release(): void }).release());
}

t.test('USSD: dial, go back, create an account to its END, then dial again', async (t) => {
  await byTestId('ussd-code').fill('');
  // The keypad types the service code while no call is up.
  for (const key of ['*', '3', '8', '4', '#'])
    await page.locator(`#ussd-phone .keypad button[data-key="${key}"]`).click();
  t.equal(await byTestId('ussd-code').inputValue(), '*384#');
  await byTestId('ussd-dial').click();
  await page.waitForFunction(() =>
    /Welcome/.test(document.querySelector('[data-testid="ussd-screen"]')?.textContent ?? ''),
  );
  t.match(await screenText(), /1\. Know More\n2\. Account Menu/);
  t.match(await byTestId('ussd-screen-count').textContent(), /^\d+\/182$/, 'the screen length against the USSD limit');

  await answer('2', /Account Menu/);
  await byTestId('ussd-back').click();
  await page.waitForFunction(() =>
    /Welcome/.test(document.querySelector('[data-testid="ussd-screen"]')?.textContent ?? ''),
  );
  t.pass('Back (0) returns to the welcome menu');

  await answer('2', /Account Menu/);
  await answer('2', /full name/);
  await answer('Amina Wanjiru', /email/);
  await answer('00', /Choose a 5-digit PIN/);
  await answer('48207', /same PIN again/);
  await answer('48207', /Account created!/);
  const customerId = /C[0-9A-F]{8}/.exec(await screenText())?.[0];
  t.ok(customerId, 'the new customer ID is on the screen');
  t.equal(
    await byTestId('ussd-text-count').textContent(),
    `${'2*0*2*2*Amina Wanjiru*00*48207*48207'.length}/182`,
    'the history as a gateway joins it',
  );
  await answer('*', /Goodbye/);
  t.equal(await page.getByTestId('ussd-screen').getAttribute('data-kind'), 'END');
  t.match(await screenText(), new RegExp(`Your customer ID is ${customerId}`));
  t.ok(await byTestId('ussd-input').isDisabled(), 'no answer after END');
  await page.getByTestId('ussd-phone').screenshot({ path: artifactPath('playground-ussd-end.png') });

  await byTestId('ussd-dial').click();
  await page.waitForFunction(() =>
    /Welcome/.test(document.querySelector('[data-testid="ussd-screen"]')?.textContent ?? ''),
  );
  t.pass('dialling again starts a new session');
  await byTestId('ussd-hangup').click();
});

t.test('USSD: the phone lists the services; a listed code dials, pages and chooses from page 2', async (t) => {
  await page.waitForSelector('[data-testid="ussd-services"] button[data-code="*500*1#"]');
  const codes = await page.locator('[data-testid="ussd-services"] button').allTextContents();
  t.same(codes, [
    '*384# Customer accounts',
    '*123# Customer accounts',
    '*500# Market prices',
    '*500*1# Market prices (crops)',
  ]);
  await page.locator('[data-testid="ussd-services"] button[data-code="*500*1#"]').click();
  t.equal(await byTestId('ussd-code').inputValue(), '*500*1#');
  await byTestId('ussd-dial').click();
  await page.waitForFunction(() =>
    /^Choose a crop:/.test(document.querySelector('[data-testid="ussd-screen"]')?.textContent ?? ''),
  );
  t.match(await screenText(), /\n98\. More\n0\. Back$/);
  await answer('98', /^12\. Coffee/);
  t.equal(await screenText(), '12. Coffee (cherry)\n13. Tomatoes\n14. Onions\n15. Cabbages\n0. Back');
  await answer('14', /^Today: KES 90 per kg\./);
  t.pass('an option of page 2 chosen there');
  await byTestId('ussd-hangup').click();
  // Any code can be typed too: the field is not limited to the list.
  await byTestId('ussd-code').fill('*999#');
  await byTestId('ussd-dial').click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="ussd-screen"]')?.getAttribute('data-kind') === 'END',
  );
  t.match(await screenText(), /not in use/);
  await byTestId('ussd-code').fill('*384#');
});

t.test('chat: connect with a key made in the page, stream a turn, answer a browser tool call', async (t) => {
  await byTestId('chat-connect').click();
  await page.waitForSelector('[data-testid="chat-identity"][data-connected="true"]');
  t.match(await byTestId('chat-identity').textContent(), /You are did:key:z6Mk/);
  await byTestId('chat-new-session').click();
  await page.waitForSelector('[data-testid="chat-socket-state"][data-state="open"]');
  t.match(await byTestId('chat-events').textContent(), /← connected/);
  t.equal(await page.locator('[data-testid="chat-sessions"] li').count(), 1);

  await byTestId('chat-input').fill('hello from the playground');
  await byTestId('chat-send').click();
  const turn = page.locator('[data-testid="chat-turn"]').last();
  await page.waitForSelector('[data-testid="chat-turn"][data-state="done"]');
  t.match(await turn.getByTestId('chat-reply').textContent(), /You said: "hello from the playground"/);
  t.match(await turn.locator('.reasoning pre').textContent(), /Thinking\.\.\./, 'the reasoning ack is shown');

  // Hold the page's tool_result until the test has seen the running call in the transcript: the stream is
  // rendered frame by frame while the turn is still open (the server cannot finish before the answer).
  await holdToolResults();
  await byTestId('chat-input').fill('use getPageTitle {}');
  await byTestId('chat-input').press('Enter');
  await page.waitForSelector(
    '[data-testid="chat-turn"][data-state="streaming"] [data-testid="chat-tool-call"][data-status="isRunning"]',
  );
  await page.waitForFunction(() =>
    /← browser_tool_call/.test(document.querySelector('[data-testid="chat-events"]')?.textContent ?? ''),
  );
  t.pass('the running tool call is shown while the turn streams');
  await releaseToolResults();
  await page.waitForFunction(
    () => document.querySelectorAll('[data-testid="chat-turn"][data-state="done"]').length === 2,
  );
  const toolTurn = page.locator('[data-testid="chat-turn"]').last();
  const call = toolTurn.getByTestId('chat-tool-call');
  t.equal(await call.getAttribute('data-status'), 'done');
  t.match(
    await call.textContent(),
    /^getPageTitle\(\) · done → .*Session actor runtime playground/,
    'the call reads as name(arguments) · status → result',
  );
  t.match(
    await toolTurn.getByTestId('chat-reply').textContent(),
    /getPageTitle returned: .*Session actor runtime playground/,
  );
  const events = (await byTestId('chat-events').textContent()) ?? '';
  t.match(events, /← browser_tool_call .*getPageTitle/);
  t.match(events, /→ tool_result .*Session actor runtime playground/);
  // Each event is one line for a person (its payload folded underneath), not a wall of JSON.
  const lines = await page.locator('[data-testid="chat-events"] li summary').allTextContents();
  t.ok(
    lines.some((line) => / ← browser_tool_call getPageTitle\(\)$/.test(line)),
    'the browser tool call reads as a call',
  );
  t.ok(
    lines.some((line) => / → tool_result → title: ".*Session actor runtime playground/.test(line)),
    'its result reads as a result',
  );
  t.notOk(
    lines.some((line) => line.includes('{"')),
    'no raw JSON on the lines',
  );
  await page.locator('#chat').screenshot({ path: artifactPath('playground-chat.png') });

  // The transcript comes back from the server when the session is opened again.
  await page.locator('[data-testid="chat-sessions"] li button.link').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="chat-human"]').length === 2);
  t.equal(await page.locator('[data-testid="chat-turn"]').count(), 2);

  await page.locator('[data-testid="chat-sessions"] li button', { hasText: 'Delete' }).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="chat-sessions"] li').length === 0);
  t.equal(
    await page.locator('[data-testid="chat-sessions"] li[aria-current]').count(),
    0,
    'no session selected after deleting it',
  );
  t.equal(await byTestId('chat-socket-state').getAttribute('data-state'), 'closed', 'its event channel closed');
  t.ok(await byTestId('chat-input').isEnabled(), 'the input stays usable: sending starts a session');

  // Typing without a session starts one; Stop: a turn waiting for a held browser tool answer is aborted on the
  // server and its stream ends.
  await holdToolResults();
  await byTestId('chat-input').fill('use getPageTitle {}');
  await byTestId('chat-send').click();
  await page.waitForSelector('[data-testid="chat-socket-state"][data-state="open"]');
  t.equal(
    await page.locator('[data-testid="chat-sessions"] li[aria-current]').count(),
    1,
    'a session was started for the message',
  );
  await page.waitForSelector('[data-testid="chat-tool-call"][data-status="isRunning"]');
  await byTestId('chat-abort').click();
  await page.waitForSelector('[data-testid="chat-turn"]:not([data-state="streaming"])');
  // The page re-enables its input once it has also refreshed the session list (after the stream's end).
  await page.waitForSelector('[data-testid="chat-input"]:not([disabled])');
  t.ok(await byTestId('chat-input').isEnabled(), 'the page takes a new message after Stop');
  await releaseToolResults();
});

t.test('dashboard: asks for the operator token, then shows non-zero figures while a small load runs', async (t) => {
  await page.locator('#dashboard').scrollIntoViewIfNeeded();
  await page.waitForSelector('[data-testid="dashboard-status"][data-state="refused"]');
  t.match(await byTestId('dashboard-status').textContent(), /operator token/i, 'says what is missing');
  await byTestId('dashboard-token').fill(OPERATOR_TOKEN);
  await byTestId('dashboard-token').press('Enter');

  let loading = true;
  const load = (async () => {
    for (let i = 0; loading; i++) {
      const dial = { sessionId: `load-${i}`, serviceCode: '*384#', phoneNumber: '+254700000009', text: '' };
      await Promise.all([
        fetch(`${server.url}/health`).then((res) => res.arrayBuffer()),
        fetch(`${server.url}/api/ussd`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(dial),
        }).then((res) => res.text()),
      ]);
    }
  })();
  try {
    // The page's CSP forbids eval: the predicate is a function, not a string.
    await page.waitForFunction(
      (ids) => ids.every((id) => parseFloat(document.querySelector(`[data-testid="${id}"]`)?.textContent ?? '') > 0),
      ['dashboard-rps', 'dashboard-latency', 'dashboard-ussd', 'dashboard-actors'],
    );
  } finally {
    loading = false;
    await load;
  }
  t.equal(await byTestId('dashboard-status').getAttribute('data-state'), 'live');
  t.match(await byTestId('dashboard-latency').textContent(), /^[\d.]+ \/ [\d.]+ \/ [\d.]+ ms$/);
  t.equal(await page.locator('#dashboard-charts canvas').count(), 4, 'four charts drawn');
  await page.locator('#dashboard').screenshot({ path: artifactPath('playground-dashboard.png') });
});

t.test('the page fits a phone screen', async (t) => {
  await page.setViewportSize({ width: 390, height: 844 });
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no horizontal scrolling at 390 px');
  await page.screenshot({ path: artifactPath('playground-phone-width.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 1000 });
});

t.test('typing before Connect connects, starts a session and sends', async (t) => {
  const fresh = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  t.teardown(() => fresh.close());
  const errors: string[] = [];
  fresh.on('pageerror', (error) => errors.push(error.message));
  await fresh.goto(`${server.url}/playground#chat`);
  t.ok(await fresh.getByTestId('chat-input').isEnabled(), 'the input is usable before Connect');
  await fresh.getByTestId('chat-input').fill('hello before connecting');
  await fresh.getByTestId('chat-input').press('Enter');
  await fresh.waitForSelector('[data-testid="chat-turn"][data-state="done"]');
  t.match(await fresh.getByTestId('chat-identity').textContent(), /You are did:key:z6Mk/, 'connected');
  t.equal(await fresh.locator('[data-testid="chat-sessions"] li').count(), 1, 'one session started');
  t.match(await fresh.getByTestId('chat-reply').textContent(), /You said: "hello before connecting"/);
  t.same(errors, []);
});

t.test('Connect and a dial refused by the rate limit say so in words, and when to try again', async (t) => {
  const limited = await startTestServer(t, { env: { RATE_LIMIT_MAX: '15', RATE_LIMIT_WINDOW_SECONDS: '600' } });
  const fresh = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  t.teardown(() => fresh.close());
  const errors: string[] = [];
  fresh.on('pageerror', (error) => errors.push(error.message));
  await fresh.goto(`${limited.url}/playground#chat`);
  // Use up what is left of this address's budget (the page and its files took some).
  let status = 0;
  for (let i = 0; i < 50 && status !== 429; i++) {
    const response = await fetch(`${limited.url}/health`);
    await response.arrayBuffer();
    status = response.status;
  }
  t.equal(status, 429, 'the budget is spent');
  await fresh.getByTestId('chat-connect').click();
  await fresh.waitForFunction(() =>
    /Could not connect/.test(document.querySelector('[data-testid="chat-identity"]')?.textContent ?? ''),
  );
  const text = (await fresh.getByTestId('chat-identity').textContent()) ?? '';
  t.match(
    text,
    /Too many requests from this address: the server's rate limit \(RATE_LIMIT_MAX requests per window\) refused this one\. Try again in \d+ s\./,
  );
  t.notMatch(text, /JSON|Unexpected token/, 'not a parse error');
  // The phone says the same in words when a dial is refused.
  await fresh.getByTestId('ussd-dial').click();
  await fresh.waitForFunction(() =>
    /Too many requests/.test(document.querySelector('[data-testid="ussd-screen"]')?.textContent ?? ''),
  );
  t.match(await fresh.getByTestId('ussd-screen').textContent(), /rate limit .* Try again in \d+ s\./);
  t.same(errors, [], 'no script error');
});

t.test('no script errors on the page', async (t) => {
  // The dashboard's refused polls (401 before the token was entered) are logged by Chromium as failed loads.
  t.same(
    pageErrors.filter((text) => !/\/metrics\)$/.test(text)),
    [],
  );
});
