// Thread: main (front door)
// Runs the chat turn an `ask` state's step asked for (services/ask.ts) through the agent
// the oracle face links (oracle/phone-turns.ts: its chat actor, as the REST and SSE routes use), under the
// account's did:key. The step waits
// for the answer up to its budget; past it the gateway is answered the `working` screen the step committed, the
// turn goes on, and its answer is handed to the USSD session when it comes (shown at the next input).
import { USSD_ACTOR } from '../protocol.js';
import type { AskNeeded, AskRequest } from '../services/ask.js';
import type { UssdRouteDeps } from './index.js';

/** The screen of a step that asked the agent: its answer within the budget, else the step's `working` screen. */
export async function askAnswered(deps: UssdRouteDeps, sessionId: string, needed: AskNeeded): Promise<string> {
  const stepTimeoutMs = deps.stepTimeoutMs ?? 15_000;
  const budget = Math.min(needed.ask.budgetMs ?? stepTimeoutMs, Math.floor(stepTimeoutMs / 2));
  const answering = runTurn(deps, needed.ask);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), budget);
  });
  const first = await Promise.race([answering, late]);
  clearTimeout(timer);
  if (first === LATE) {
    void answering
      .then((answer) => deliver(deps, sessionId, needed.ask, answer, true))
      .catch((err: unknown) => deps.log.warn({ err, sessionId }, 'a late USSD ask answer was not kept'));
    return needed.screen;
  }
  return (await deliver(deps, sessionId, needed.ask, first, false)) ?? needed.screen;
}

const LATE = Symbol('late');

/** Hands the answer (null: the agent failed) to the USSD session; the screen that shows it, or null. */
function deliver(deps: UssdRouteDeps, sessionId: string, ask: AskRequest, answer: string | null, late: boolean) {
  const { turnId, customerId, serviceId } = ask;
  return deps.actors
    .ref(USSD_ACTOR, sessionId)
    .send({ type: 'askAnswer', turnId, answer, late, customerId, serviceId }, deps.stepTimeoutMs ?? 15_000);
}

/** The agent's answer to the question (null: it failed, or no agent is linked). */
async function runTurn(deps: UssdRouteDeps, ask: AskRequest): Promise<string | null> {
  const agent = deps.agent?.();
  if (!agent) return null;
  const { userDid, chatSessionId: sessionId, turnId, question: message, model } = ask;
  return agent({ userDid, sessionId, turnId, message, ...(model === undefined ? {} : { model }) });
}
