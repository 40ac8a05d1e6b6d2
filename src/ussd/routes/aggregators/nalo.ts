// Thread: main (front door)
// Nalo Solutions' USSD format. `MSGTYPE` true marks the dial (then `USERDATA` is the
// dialled code); later requests carry only the latest input in `USERDATA`. The answer's `MSGTYPE`: true continues.
import * as v from 'valibot';
import { type Aggregator, digits, dialTurn, echo, flag, shown } from './aggregator.js';

const NaloRequest = v.object({
  USERID: v.optional(digits, ''),
  MSISDN: digits,
  USERDATA: v.optional(v.string(), ''),
  MSGTYPE: flag,
  NETWORK: v.optional(v.string()),
  SESSIONID: digits,
});

const NaloAnswer = v.object({
  USERID: v.string(),
  MSISDN: v.string(),
  MSG: v.string(),
  MSGTYPE: v.boolean(),
});

export const nalo: Aggregator<typeof NaloRequest> = {
  name: 'nalo',
  path: '/api/ussd/nalo',
  summary: "One request of a USSD session in Nalo Solutions' format",
  body: NaloRequest,
  answerSchema: NaloAnswer,
  turn(body) {
    const session = { sessionId: body.SESSIONID, msisdn: body.MSISDN };
    return body.MSGTYPE
      ? dialTurn(this.name, { ...session, serviceCode: body.USERDATA, text: '' })
      : dialTurn(this.name, { ...session, text: body.USERDATA.trim(), latest: {} });
  },
  answer(screen, request) {
    const { more, message } = shown(screen);
    return { USERID: echo(request, 'USERID'), MSISDN: echo(request, 'MSISDN'), MSG: message, MSGTYPE: more };
  },
};
