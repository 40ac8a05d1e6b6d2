// Thread: any
// The USSD session actor's protocol, declared once (runtime/protocol.ts). A dial (one gateway
// request) answers the screen, `CON ...` or `END ...`; failures are runtime errors, mapped to END texts by
// answerOf. An inspect (the operator's debug route) answers the session's live state, or null. A gatewayEnd
// records how the gateway ended the session.
import { declareProtocol, type Call, type ShapeOf } from '../runtime/protocol.js';
import type { GatewayEnd, UssdDial, UssdSession } from './session.js';
import type { AskNeeded } from './services/ask.js';

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

/**
 * Cluster mode: what became of a notification of the session (the outbox, after a delivery): `done` (delivered or
 * given up) takes it out of the record, else `tried` is recorded. Answers false when the session no longer holds
 * it or this node may not write it (its partition moved): the outbox then leaves it to the partition's owner.
 */
export interface OutboxRecordMessage {
  type: 'outboxRecord';
  id: string;
  done: boolean;
  tried: number;
}

/** Cluster mode, on the partition's new owner: the session's notifications still pending go to this host's outbox. */
export interface OutboxResumeMessage {
  type: 'outboxResume';
}

/**
 * The answer of the chat turn a dial asked for (an `ask` state: services/ask.ts), from the front door. Answers the
 * screen that shows it, or null when the session no longer waits for that turn. `late`: the gateway was answered
 * `working` already, so the answer is kept for the next input.
 */
export interface AskAnswerMessage {
  type: 'askAnswer';
  turnId: string;
  /**
   * The agent's answer; null when it failed (the state's `failed` text shows). Undefined: not known yet, the step
   * answered `working`: the account keeps the turn as pending, for the next dial (nothing is shown).
   */
  answer?: string | null;
  late: boolean;
  /** The account holds the turn (pending): shown now, it is taken off the account. */
  kept?: boolean;
  /** Where a late answer is kept when the session no longer waits for it: the account, per service. */
  customerId: string;
  serviceId: string;
}

export interface InspectMessage {
  type: 'inspect';
}

/** What the operator sees of a live session: never a PIN, never a draft. */
export type SessionView = Pick<UssdSession, 'state' | 'context' | 'createdAt' | 'updatedAt' | 'expiresAt'>;

export const USSD_ACTOR = declareProtocol<{
  calls:
    | Call<DialMessage, string | AskNeeded>
    | Call<AskAnswerMessage, string | null>
    | Call<InspectMessage, SessionView | null>
    | Call<GatewayEndMessage, GatewayEndOutcome>
    | Call<OutboxRecordMessage, boolean>
    | Call<OutboxResumeMessage, number>;
  signals: never;
  stream: never;
}>('ussd');

export type UssdShape = ShapeOf<typeof USSD_ACTOR>;
