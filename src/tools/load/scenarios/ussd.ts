// Thread: main
// USSD: each journey is one caller (its own session id and phone number) dialling and walking a menu path, one
// POST per input with the whole history in `text` as a telecom gateway sends it, thinking between steps.
import type autocannon from 'autocannon';
import { gatewaySessionId } from '../session-ids.js';
import { expectStatus, LoadError, timed, type HttpAnswer } from '../http.js';
import type { UssdPath } from '../options.js';
import { sleep, thinkTime, weightedPicker } from './pick.js';
import type { Scenario, ScenarioContext } from './types.js';

/** `text` for each step: "" (the dial), then the inputs so far joined by `*`. */
export function ussdTexts(inputs: readonly string[]): string[] {
  return ['', ...inputs.map((_, i) => inputs.slice(0, i + 1).join('*'))];
}

/** The answer must be a CON screen, or END only on the path's last step. */
function checkScreen(answer: HttpAnswer, last: boolean): void {
  expectStatus(answer, 200);
  const kind = /^(CON|END) /.exec(answer.body)?.[1];
  if (!kind) throw new LoadError('ussd answer not CON/END');
  if (kind === 'END' && !last) throw new LoadError('ussd END before the path ended', answer.body);
}

export function ussdScenario(ctx: ScenarioContext): Scenario {
  const { ussdPaths, ussdRoute, serviceCode, phonePrefix, thinkMs, headers } = ctx.options;
  const pickPath = weightedPicker<UssdPath>(ussdPaths, (p) => p.weight);
  const phoneDigits = 12 - phonePrefix.length;
  let callers = 0;
  const newCaller = () => {
    const n = ++callers;
    // Random, as an aggregator names sessions: a counter's IDs would sort the sessions in progress next to each
    // other, which real traffic never does (see src/records/lmdb/ussd/sessions.ts).
    return {
      sessionId: gatewaySessionId(),
      phoneNumber: phonePrefix + String(n % 10 ** phoneDigits).padStart(phoneDigits, '0'),
    };
  };
  const body = (caller: { sessionId: string; phoneNumber: string }, text: string) =>
    JSON.stringify({ ...caller, serviceCode, text });
  const post = (payload: string) =>
    ctx.client.request('POST', ussdRoute, {
      headers: { ...headers, 'content-type': 'application/json' },
      body: payload,
    });

  return {
    name: 'ussd',
    async iterate(scheduledAt) {
      const caller = newCaller();
      const texts = ussdTexts(pickPath().inputs);
      for (let step = 0; step < texts.length; step++) {
        if (step > 0) await sleep(thinkTime(thinkMs));
        const since = step === 0 ? scheduledAt : performance.now();
        const last = step === texts.length - 1;
        await timed(ctx.recorder(), since, async () => checkScreen(await post(body(caller, texts[step])), last));
        ctx.recorder().count('ussd steps');
      }
    },
    autocannonRequests(): autocannon.Request[] | undefined {
      // autocannon replays one fixed sequence per connection (no think time): only for a single path.
      if (ussdPaths.length !== 1) return undefined;
      const texts = ussdTexts(ussdPaths[0].inputs);
      return texts.map((text, step) => ({
        method: 'POST' as const,
        path: ussdRoute,
        headers: { ...headers, 'content-type': 'application/json' },
        setupRequest(req: autocannon.Request, context: { caller?: { sessionId: string; phoneNumber: string } }) {
          if (step === 0) context.caller = newCaller();
          return { ...req, body: body(context.caller!, text) };
        },
      }));
    },
  };
}
