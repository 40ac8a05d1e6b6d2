// The USSD session actor's protocol, declared once (runtime/protocol.ts): a dial (one gateway request)
// answers the screen, `CON ...` or `END ...`. Failures are runtime errors, mapped to END texts by answerOf.
import { declareProtocol, type Call, type ShapeOf } from '../runtime/protocol.js';
import type { UssdDial } from './session.js';

/** One user input of a session, as the gateway sent it. */
export interface DialMessage extends UssdDial {
  type: 'dial';
}

export const USSD_ACTOR = declareProtocol<{
  calls: Call<DialMessage, string>;
  signals: never;
  stream: never;
}>('ussd');

export type UssdShape = ShapeOf<typeof USSD_ACTOR>;
