// Thread: any
// The USSD session actor's protocol, declared once (runtime/protocol.ts). A dial (one gateway
// request) answers the screen, `CON ...` or `END ...`; failures are runtime errors, mapped to END texts by
// answerOf. An inspect (the operator's debug route) answers the session's live state, or null. A gatewayEnd
// records how the gateway ended the session.
import { declareProtocol, type Call, type ShapeOf } from '../runtime/protocol.js';
import type { GatewayEnd, UssdDial, UssdSession } from './session.js';

/** One user input of a session, as the gateway sent it. */
export interface DialMessage extends UssdDial {
  type: 'dial';
}

/**
 * The gateway says the session is over (Africa's Talking's end-of-session notification, a Hubtel release or
 * timeout, a Beem terminate). Answers `recorded`, `repeated` (the session holds a gateway end already) or
 * `unknown` (no such session stored, or another phone's).
 */
export interface GatewayEndMessage {
  type: 'gatewayEnd';
  /** When given, it must be the session's own number. */
  phoneNumber?: string;
  end: GatewayEnd;
}

export type GatewayEndOutcome = 'recorded' | 'repeated' | 'unknown';

export interface InspectMessage {
  type: 'inspect';
}

/** What the operator sees of a live session: never a PIN, never a draft. */
export type SessionView = Pick<UssdSession, 'state' | 'context' | 'createdAt' | 'updatedAt' | 'expiresAt'>;

export const USSD_ACTOR = declareProtocol<{
  calls:
    | Call<DialMessage, string>
    | Call<InspectMessage, SessionView | null>
    | Call<GatewayEndMessage, GatewayEndOutcome>;
  signals: never;
  stream: never;
}>('ussd');

export type UssdShape = ShapeOf<typeof USSD_ACTOR>;
