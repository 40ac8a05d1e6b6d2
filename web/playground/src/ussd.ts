// The USSD phone: one POST /api/ussd per answer, `text` = every answer of the session joined by `*`, exactly
// as a telecom gateway (and src/tools/ussd-simulator.ts) sends it; CON keeps the session, END closes it. The
// services the server serves (GET /api/ussd/services) are listed as buttons that fill the code; any code dials.
import { appendLog, byId, el, errorMessage } from './dom.js';
import { refusal } from './readable.js';

/** The USSD limit: a screen (with its CON/END prefix) and the accumulated `text` are at most this long. */
export const USSD_LIMIT = 182;

interface Call {
  sessionId: string;
  inputs: string[];
}

interface ServiceSummary {
  id: string;
  version: string;
  name: string;
  codes: { code: string; start?: string }[];
}

/** Lists the server's services in `list`: one button per code, which puts it in `code` between calls. */
async function listServices(list: HTMLElement, code: HTMLInputElement, dial: HTMLButtonElement): Promise<void> {
  try {
    const response = await fetch('/api/ussd/services');
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const { services } = (await response.json()) as { services: ServiceSummary[] };
    const buttons = services.flatMap((service) =>
      service.codes.map((entry) => {
        const label = `${entry.code} ${service.name}${entry.start ? ` (${entry.start})` : ''}`;
        const button = el('button', label, {
          type: 'button',
          'data-code': entry.code,
          title: `${service.id} ${service.version}`,
        });
        button.addEventListener('click', () => {
          if (code.readOnly) return;
          code.value = entry.code;
          dial.focus();
        });
        return button;
      }),
    );
    list.replaceChildren(...(buttons.length > 0 ? buttons : [el('span', 'No service is served.')]));
  } catch (error) {
    list.textContent = `Service list unavailable (${errorMessage(error)}): type a code.`;
  }
}

export function setupUssdPhone(): void {
  const number = byId<HTMLInputElement>('ussd-number');
  const code = byId<HTMLInputElement>('ussd-code');
  const dial = byId<HTMLButtonElement>('ussd-dial');
  const hangup = byId<HTMLButtonElement>('ussd-hangup');
  const screen = byId('ussd-screen');
  const screenCount = byId('ussd-screen-count');
  const textCount = byId('ussd-text-count');
  const input = byId<HTMLInputElement>('ussd-input');
  const send = byId<HTMLButtonElement>('ussd-send');
  const back = byId<HTMLButtonElement>('ussd-back');
  const log = byId('ussd-log');
  void listServices(byId('ussd-services'), code, dial);
  let call: Call | undefined;
  let busy = false;

  const render = () => {
    const live = call !== undefined;
    for (const control of [input, send, back]) control.disabled = !live || busy;
    hangup.disabled = !live;
    dial.disabled = busy;
    number.readOnly = code.readOnly = live;
  };

  const show = (text: string, length = text.length) => {
    screen.textContent = text;
    screenCount.textContent = `${length}/${USSD_LIMIT}`;
    screenCount.classList.toggle('over', length > USSD_LIMIT);
  };

  const request = async (active: Call) => {
    const text = active.inputs.join('*');
    textCount.textContent = `${text.length}/${USSD_LIMIT}`;
    textCount.classList.toggle('over', text.length > USSD_LIMIT);
    const body = {
      sessionId: active.sessionId,
      serviceCode: code.value.trim(),
      phoneNumber: number.value.trim(),
      text,
    };
    busy = true;
    render();
    try {
      const response = await fetch('/api/ussd', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = await response.text();
      appendLog(log, el('li', `text=${JSON.stringify(text)} → HTTP ${response.status} ${answer.slice(0, 3)}`));
      const match = /^(CON|END) ([\s\S]*)$/.exec(answer);
      if (response.status !== 200 || !match) {
        // A gateway ends the user's session on anything but a CON/END answer.
        const why =
          response.status === 429
            ? refusal(429, answer, response.headers.get('retry-after'))
            : `Unexpected answer (HTTP ${response.status}):\n${answer.slice(0, 300)}`;
        show(why, 0);
        call = undefined;
        return;
      }
      show(match[2], answer.length);
      screen.dataset.kind = match[1];
      if (match[1] === 'END') call = undefined;
    } catch (error) {
      show(`Cannot reach the server: ${errorMessage(error)}`, 0);
      call = undefined;
    } finally {
      busy = false;
      render();
      (call ? input : dial).focus();
    }
  };

  byId<HTMLFormElement>('ussd-dial-form').addEventListener('submit', (event) => {
    event.preventDefault();
    call = { sessionId: `playground-${crypto.randomUUID()}`, inputs: [] };
    log.replaceChildren();
    void request(call);
  });

  const answer = (value: string) => {
    if (!call || busy) return;
    call.inputs.push(value);
    input.value = '';
    void request(call);
  };
  byId<HTMLFormElement>('ussd-answer-form').addEventListener('submit', (event) => {
    event.preventDefault();
    answer(input.value.trim());
  });
  back.addEventListener('click', () => answer('0'));
  hangup.addEventListener('click', () => {
    call = undefined;
    show('Call ended. Dial to start again.', 0);
    delete screen.dataset.kind;
    render();
    dial.focus();
  });

  // The keypad types into the answer during a call, into the service code otherwise.
  byId('ussd-phone')
    .querySelector('.keypad')!
    .addEventListener('click', (event) => {
      const key = (event.target as HTMLElement).closest('button')?.dataset.key;
      if (!key) return;
      const target = call ? input : code;
      if (target.disabled || target.readOnly) return;
      target.value = key === 'Backspace' ? target.value.slice(0, -1) : target.value + key;
      target.focus();
    });
  render();
}
