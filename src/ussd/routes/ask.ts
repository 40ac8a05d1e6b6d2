// Thread: main (front door)
// Runs the chat turn an `ask` state's step asked for (services/ask.ts) through the agent the oracle face links
// (oracle/chat/phone-turns.ts: a run on its chat actor, as a streamed POST /messages is), under the account's did:key,
// or finds the answer of the turn the session waits for (asked before, perhaps through a front door that died
// since). The step waits for the answer up to its budget; past it the gateway is answered the `working` screen the
// step committed, the account keeps the turn as pending (for the next dial), and the answer is handed to the USSD
// session when it comes. All of it under the step's one deadline (dial.ts), but the late answer's hand-over. Any front door finds it at the next input or dial: the oracle keeps the turn's run.
import { timeLeft } from '../../runtime/deadline-signals.js';
import type { CallDeadline } from '../../runtime/router.js';
import { USSD_ACTOR } from '../protocol.js';
import type { AskNeeded, AskRequest } from '../services/ask.js';
import type { UssdRouteDeps } from './index.js';

/**
 * The screen of a step that asked the agent: its answer within the budget (at most half of what is left of the
 * step's deadline: the hand-over to the session takes the rest), else the step's `working` screen.
 */
export async function askAnswered(
  deps: UssdRouteDeps,
  sessionId: string,
  needed: AskNeeded,
  deadline: AbortSignal,
): Promise<string> {
  const left = timeLeft(deadline, deps.stepTimeoutMs ?? 15_000);
  const budget = Math.min(needed.ask.budgetMs ?? left, Math.floor(left / 2));
  const { ask } = needed;
  const answering = answerOf(deps, ask);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), budget);
  });
  const first = await Promise.race([answering, late]);
  clearTimeout(timer);
  if (first === LATE || first === undefined) {
    // A turn asked now: the account keeps it as pending before the gateway is told `working` (the user may hang up).
    const keeping =
      ask.question === undefined ? Promise.resolve(null) : deliver(deps, sessionId, ask, undefined, deadline);
    const kept = await keeping.then(
      () => true,
      (err: unknown) => (deps.log.warn({ err, sessionId }, 'a pending USSD ask turn was not kept'), false),
    );
    if (kept && first === LATE)
      void answering
        .then((answer) => (answer === undefined ? null : deliver(deps, sessionId, ask, answer, undefined, true)))
        .catch((err: unknown) => deps.log.warn({ err, sessionId }, 'a late USSD ask answer was not kept'));
    return needed.screen;
  }
  return (await deliver(deps, sessionId, ask, first, deadline)) ?? needed.screen;
}

const LATE = Symbol('late');

/**
 * Hands the answer (null: the agent failed; undefined: none yet, keep the turn as pending) to the USSD session; the
 * screen that shows it, or null. Under the step's deadline; a late answer (the step was answered) under its own.
 */
function deliver(
  deps: UssdRouteDeps,
  sessionId: string,
  ask: AskRequest,
  answer: string | null | undefined,
  deadline: CallDeadline | undefined,
  late = false,
) {
  const { turnId, customerId, serviceId } = ask;
  // A turn asked before is the account's (pending) until its answer shows.
  const kept = ask.question === undefined;
  return deps.actors
    .ref(USSD_ACTOR, sessionId)
    .send({ type: 'askAnswer', turnId, answer, late, kept, customerId, serviceId }, deadline ?? deps.stepTimeoutMs);
}

/** The agent's answer to the question, or to the turn asked before (null: it failed, or no agent is linked). */
async function answerOf(deps: UssdRouteDeps, ask: AskRequest): Promise<string | null | undefined> {
  const agent = deps.agent?.();
  if (!agent) return null;
  const { userDid, chatSessionId: sessionId, turnId, question: message, model } = ask;
  if (message === undefined) return agent.find({ userDid, sessionId, turnId });
  return agent.ask({ userDid, sessionId, turnId, message, ...(model === undefined ? {} : { model }) });
}
