// Thread: main (front door)
// A gateway's word that a session is over (Africa's Talking's end-of-session
// notification, a Hubtel release or timeout, a Beem terminate): counted by status, its duration observed when
// the gateway gives one, and recorded on the session by its actor (a live session ends there).
import type { HttpRequest } from '../../../http/types.js';
import { GATEWAY_END_STATUSES, ussdGatewayEnds, ussdGatewaySessionDuration } from '../../../metrics/catalogue.js';
import { fitsKey } from '../../../store/keys.js';
import { type GatewayEndOutcome, USSD_ACTOR } from '../../protocol.js';
import type { GatewayEnd } from '../../session.js';
import type { UssdRouteDeps } from '../index.js';

/** The metrics' status label: the gateway's word in lower case when it is a known one, else `other`. */
export function statusLabel(status: string): string {
  const word = status.toLowerCase();
  return GATEWAY_END_STATUSES.includes(word) ? word : 'other';
}

/**
 * Records the end on the session and counts it (a repeated notification is not counted again); answers whether
 * a stored session took it. Never throws.
 */
export async function recordGatewayEnd(
  deps: UssdRouteDeps,
  sessionId: string,
  end: GatewayEnd,
  req: HttpRequest,
  phoneNumber?: string,
): Promise<boolean> {
  const outcome = fitsKey(sessionId) ? await record(deps, sessionId, end, req, phoneNumber) : 'unknown';
  if (outcome !== 'repeated') {
    const label = statusLabel(end.status);
    ussdGatewayEnds.with(end.gateway, label).inc();
    if (end.durationMs !== undefined)
      ussdGatewaySessionDuration.with(end.gateway, label).observe(end.durationMs / 1000);
  }
  return outcome !== 'unknown';
}

async function record(
  { actors, log, stepTimeoutMs = 15_000 }: UssdRouteDeps,
  sessionId: string,
  end: GatewayEnd,
  req: HttpRequest,
  phoneNumber: string | undefined,
): Promise<GatewayEndOutcome> {
  const message = phoneNumber === undefined ? { end } : { end, phoneNumber };
  try {
    // Under the step's deadline, as a step: past it the call rejects with its DeadlineExceededError.
    return await actors.ref(USSD_ACTOR, sessionId, req.trace).send({ type: 'gatewayEnd', ...message }, stepTimeoutMs);
  } catch (err) {
    // The count stands; the record is lost (the session then just expires): the gateway is not told to retry.
    log.warn({ err, reqId: req.requestId, sessionId }, 'USSD gateway end not recorded');
    return 'unknown';
  }
}
