// The `ask` tests' service (docs/ussd-ask.md): make an account, log in, ask the agent; and a dial through the
// Africa's Talking route (POST /api/ussd, form-encoded, the whole text so far), as that gateway sends it.
import { englishServiceHead } from './ussd-services.js';
export const ASK_PIN = '24680';

/** The stand-in's model in the catalogue beside the built-in agent (ORACLE_MODELS). */
export const ASK_MODELS = JSON.stringify({
  default: 'builtin',
  models: [
    { id: 'builtin', provider: 'builtin', label: 'Built-in agent' },
    { id: 'stand-in', label: 'Stand-in' },
  ],
});

/**
 * A one-language service: 1 makes an account and logs it in, 2 logs in with an ID; then 1 asks the built-in agent,
 * 2 the catalogue's `stand-in` model with a step budget of `slowBudgetMs`.
 */
export function askService(slowBudgetMs = 300): string {
  return `${englishServiceHead('agent', '*600#', 'welcome')}states:
  welcome:
    type: menu
    text: 'Agent. Choose:'
    options:
      - { key: '1', text: New account, next: name }
      - { key: '2', text: Log in, next: loginId }
  name:
    type: input
    prompt: 'Your name:'
    validate: { kind: text, minLength: 2, maxLength: 30 }
    save: fullName
    next: pin
    invalid: { next: name }
  pin:
    type: input
    prompt: 'Choose a PIN:'
    validate: { kind: pin, digits: 5 }
    save: pin
    next: create
    invalid: { next: pin }
  create:
    type: action
    action: createAccount
    outcomes:
      created: { next: loginPin, set: { loginId: '{{createdId}}' } }
      incomplete: { next: welcome }
  loginId:
    type: input
    prompt: 'Customer ID:'
    validate: { kind: customerId }
    save: loginId
    next: loginPin
    invalid: { next: loginId }
  loginPin:
    type: input
    prompt: 'PIN for {{loginId}}:'
    validate: { kind: pin, digits: 5 }
    next: logIn
    invalid: { next: loginPin }
  logIn:
    type: action
    action: logIn
    outcomes:
      ok: { next: agents }
      wrong: { next: loginPin }
      lastAttempt: { next: loginPin }
      locked: { next: welcome }
      lockedNow: { next: welcome }
      unknown: { next: welcome }
  agents:
    type: menu
    text: 'Logged in.'
    requiresLogin: true
    options:
      - { key: '1', text: Ask the agent, next: ask }
      - { key: '2', text: Ask the slow agent, next: askSlow }
  ask:
    type: ask
    prompt: 'Ask me anything:'
    working: 'Still working on it. Send any key to see the answer.'
    failed: 'Sorry, no answer now.'
    back: agents
    home: true
  askSlow:
    type: ask
    prompt: 'Ask the slow one:'
    working: 'Still working on it. Send any key to see the answer.'
    failed: 'Sorry, no answer now.'
    model: stand-in
    budgetMs: ${slowBudgetMs}
    back: agents
    home: true
`;
}

/** One Africa's Talking request: the answer's text and how long it took. */
export async function dialAt(
  url: string,
  sessionId: string,
  text: string,
  phoneNumber = '+254700000077',
): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ sessionId, serviceCode: '*600#', phoneNumber, networkCode: '63902', text }).toString(),
  });
  if (res.status !== 200) throw new Error(`POST /api/ussd answered ${res.status}`);
  return { text: await res.text(), ms: performance.now() - started };
}
