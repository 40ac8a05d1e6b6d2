// Thread: actor host
// What a committed step of the USSD session actor tells others: the chat turn it asked the front door for (an ask
// state), and the service's funnel metrics.
import { ussdServiceSessionsEnded, ussdServiceSteps } from '../../metrics/catalogue.js';
import { chatSessionIdOf, type AskedTurn, type AskNeeded } from '../services/ask.js';
import { ENDED_STATE, type UssdSession } from '../session.js';

/** The chat turn a step asked for, as the front door runs it: the ask state's model and budget. */
export function askOf(asked: AskedTurn, userDid: string, session: UssdSession): AskNeeded['ask'] {
  const customerId = session.context.customerId ?? '';
  const serviceId = session.serviceId ?? 'builtin';
  return { ...asked, customerId, serviceId, userDid, chatSessionId: chatSessionIdOf(userDid, serviceId) };
}

/** The service's funnel: the state a step left the session in, and where and why a session ended. */
export function countStep(
  before: UssdSession | undefined,
  after: UssdSession,
  reason: 'end' | 'exit' | undefined,
): void {
  const service = after.serviceId ?? 'builtin';
  ussdServiceSteps.with(service, after.state).inc();
  if (after.state === ENDED_STATE)
    ussdServiceSessionsEnded.with(service, before?.state ?? after.state, reason ?? 'end').inc();
}

/** A session that expired without ending: the user stopped answering. */
export function countTimedOut(session: UssdSession): void {
  ussdServiceSessionsEnded.with(session.serviceId ?? 'builtin', session.state, 'timeout').inc();
}
