// Thread: main (front door)
// Arkesel's USSD format. `newSession` marks the dial (then `userData` is the dialled
// code); later requests carry only the latest input in `userData`.
import * as v from 'valibot';
import { type Aggregator, digits, dialTurn, echo, flag, shown } from './aggregator.js';

const ArkeselRequest = v.object({
  sessionID: digits,
  userID: v.optional(digits, ''),
  newSession: flag,
  msisdn: digits,
  userData: v.optional(v.string(), ''),
  network: v.optional(v.string()),
});

const ArkeselAnswer = v.object({
  sessionID: v.string(),
  userID: v.string(),
  msisdn: v.string(),
  message: v.string(),
  continueSession: v.boolean(),
});

export const arkesel: Aggregator<typeof ArkeselRequest> = {
  name: 'arkesel',
  path: '/api/ussd/arkesel',
  summary: "One request of a USSD session in Arkesel's format",
  body: ArkeselRequest,
  answerSchema: ArkeselAnswer,
  turn(body) {
    const session = { sessionId: body.sessionID, msisdn: body.msisdn };
    return body.newSession
      ? dialTurn(this.name, { ...session, serviceCode: body.userData, text: '' })
      : dialTurn(this.name, { ...session, text: body.userData.trim(), latest: {} });
  },
  answer(screen, request) {
    const { more, message } = shown(screen);
    return {
      sessionID: echo(request, 'sessionID'),
      userID: echo(request, 'userID'),
      msisdn: echo(request, 'msisdn'),
      message,
      continueSession: more,
    };
  },
};
