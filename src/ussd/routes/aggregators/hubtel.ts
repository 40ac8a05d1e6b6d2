// Thread: main (front door)
// Hubtel's USSD / Programmable Services format (and the gateways that copy it:
// Emergent, Cross-Switch). Hubtel sends only the latest input in `Message` and numbers requests in `Sequence`.
import * as v from 'valibot';
import { type Aggregator, digits, dialTurn, echo, endTurn, serviceCodeOf, shown } from './aggregator.js';

const HubtelRequest = v.object({
  SessionId: digits,
  Mobile: digits,
  /** Initiation, Response, Release or Timeout, in any case. */
  Type: v.string(),
  Message: v.optional(v.string(), ''),
  ServiceCode: v.optional(v.string(), ''),
  Operator: v.optional(v.string()),
  ClientState: v.optional(v.string()),
  Sequence: v.optional(v.union([v.number(), v.string()])),
  Platform: v.optional(v.string()),
});

const HubtelAnswer = v.object({
  SessionId: v.string(),
  Type: v.picklist(['Response', 'Release']),
  Message: v.string(),
  Label: v.string(),
  DataType: v.picklist(['input', 'display']),
  FieldType: v.literal('text'),
  ClientState: v.string(),
});

export const hubtel: Aggregator<typeof HubtelRequest> = {
  name: 'hubtel',
  path: '/api/ussd/hubtel',
  summary: "One request of a USSD session in Hubtel's format (Emergent and Cross-Switch send the same)",
  body: HubtelRequest,
  answerSchema: HubtelAnswer,
  turn(body) {
    const type = body.Type.toLowerCase();
    const session = { sessionId: body.SessionId, msisdn: body.Mobile };
    if (type === 'initiation') {
      // Message is what the user dialled (`*713*5#`); ServiceCode the code alone (`713`, `711*2` or `7112#`).
      const dialled = serviceCodeOf(body.Message) ?? body.ServiceCode;
      return dialTurn(this.name, { ...session, serviceCode: dialled, text: '' });
    }
    if (type === 'response') {
      const step = Number(body.Sequence);
      const latest = Number.isInteger(step) ? { step } : {};
      return dialTurn(this.name, { ...session, text: body.Message.trim(), latest });
    }
    if (type === 'release' || type === 'timeout') return endTurn(this.name, body.SessionId, type);
    return { kind: 'invalid', problem: `Type ${body.Type.slice(0, 20)}` };
  },
  answer(screen, request) {
    const { more, message } = shown(screen);
    return {
      SessionId: echo(request, 'SessionId'),
      Type: more ? 'Response' : 'Release',
      Message: message,
      Label: message.split('\n', 1)[0] ?? '',
      DataType: more ? 'input' : 'display',
      FieldType: 'text',
      ClientState: '',
    };
  },
};
