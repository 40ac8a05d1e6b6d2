// Thread: any
// The fixed answers of the spec. Both are HTTP 200 text/plain: a gateway ends the user's
// session on any non-2xx.
import { ussdStep } from '../metrics/catalogue.js';

export const INVALID_INPUT = 'END Invalid input. Please try again.';
export const SERVICE_UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';
export const SESSION_EXPIRED = 'END Your session has expired. Please dial again.';

/**
 * The USSD face's one mapping from a failed actor call to its answer. Every failure (busy mailbox or host
 * queue, a host restarting or stopping, a crash) is the same END text: a gateway can only end the session.
 */
export function answerOf(_error: unknown): string {
  ussdStep.unavailable.inc();
  return SERVICE_UNAVAILABLE;
}

/** The END texts by name with their meaning, for docs/errors.md (`npm run docs:errors`). */
export const USSD_ENDS: readonly { name: string; text: string; meaning: string }[] = [
  {
    name: 'INVALID_INPUT',
    text: INVALID_INPUT,
    meaning: 'A request without the fields of its form, or a choice the menu has not',
  },
  {
    name: 'SERVICE_UNAVAILABLE',
    text: SERVICE_UNAVAILABLE,
    meaning: 'Any failed step (busy mailbox or host queue, a host restarting, a crash, the node draining or starting)',
  },
  { name: 'SESSION_EXPIRED', text: SESSION_EXPIRED, meaning: 'The session ended or timed out; the user dials again' },
];
