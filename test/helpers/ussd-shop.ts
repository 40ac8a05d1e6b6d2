// A USSD service whose actions call a backend (test/helpers/ussd-backend.ts) at `base`: one menu option per way
// the backend answers, each an `http` action branching to a screen of the answer's fields, an error END or a
// timeout END; option 7 leaves an SMS notification (`notify`) and ends.
import { englishServiceHead } from './ussd-services.js';
export const SORRY = 'END Service unavailable, try later.';
export const TIMED_OUT = 'END The service is slow, try later.';

const httpState = (base: string, path: string, extra = '') => `
    type: action
    action: http
    request:
      url: ${base}${path}
      values: [note]
      headers: { Authorization: { env: H41_TOKEN, prefix: 'Bearer ' } }
      save: { balance: account.balance, holder: account.holder }${extra}
    outcomes:
      ok: { next: shown }
      failed: { next: sorry }
      timeout: { next: slow }`;

export function shopService(base: string, sms = base, options: { attempts?: number } = {}): string {
  return `
${englishServiceHead('shop', '*500#', 'menu')}states:
  menu:
    type: menu
    text: Shop
    options:
      - { key: '1', text: Balance, next: balance, set: { note: n1 } }
      - { key: '2', text: Hang, next: hang }
      - { key: '3', text: Error, next: fail500 }
      - { key: '4', text: Text, next: text }
      - { key: '5', text: Big, next: big }
      - { key: '6', text: Slow, next: slowCall }
      - { key: '7', text: SMS me, next: sms }
  balance:${httpState(base, '/balance')}
  hang:${httpState(base, '/hang')}
  fail500:${httpState(base, '/500')}
  text:${httpState(base, '/text')}
  big:${httpState(base, '/big')}
  slowCall:${httpState(base, '/slow')}
  sms:
    type: action
    action: notify
    request:
      url: ${sms}/sms
      values: [note]
      headers: { X-Api-Key: { env: H41_TOKEN } }${options.attempts ? `\n      attempts: ${options.attempts}` : ''}
    outcomes:
      queued: { next: smsSent }
  smsSent:
    type: end
    text: We will send you an SMS.
  shown:
    type: menu
    text: 'Balance {{balance}} for {{holder}}'
    back: menu
  sorry:
    type: end
    text: Service unavailable, try later.
  slow:
    type: end
    text: The service is slow, try later.
`;
}

/** One gateway request to `url`'s /api/ussd for the shop's code; the answer's status, text and time taken. */
export async function dialShop(
  url: string,
  sessionId: string,
  text: string,
  phoneNumber = '+254700000041',
): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, serviceCode: '*500#', phoneNumber, text }),
  });
  return { status: res.status, text: await res.text(), ms: performance.now() - started };
}
