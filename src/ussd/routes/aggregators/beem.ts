// Thread: main (front door)
// Beem Africa's USSD hub format. `command` is initiate, continue or terminate; the
// latest input is `payload.response`. Beem sends no service code: USSD_BEEM_SERVICE_CODE names the one dialled.
import * as v from 'valibot';
import { type Aggregator, digits, dialTurn, echo, endTurn, shown } from './aggregator.js';

const BeemRequest = v.object({
  command: v.string(),
  msisdn: digits,
  session_id: digits,
  operator: v.optional(v.string(), ''),
  payload: v.optional(
    v.object({
      request_id: v.optional(v.union([v.number(), v.string()])),
      response: v.optional(digits, ''),
    }),
    {},
  ),
  /** Not sent by Beem; taken when a proxy adds it, before USSD_BEEM_SERVICE_CODE. */
  serviceCode: v.optional(v.string()),
});

const BeemAnswer = v.object({
  msisdn: v.string(),
  operator: v.string(),
  session_id: v.string(),
  command: v.picklist(['continue', 'terminate']),
  payload: v.object({ request_id: v.union([v.number(), v.string()]), request: v.string() }),
});

/** The request's `payload.request_id` as it came (a number or a string), 0 when absent. */
function requestIdOf(request: unknown): number | string {
  const payload = request && typeof request === 'object' ? (request as { payload?: unknown }).payload : undefined;
  const id = payload && typeof payload === 'object' ? (payload as { request_id?: unknown }).request_id : undefined;
  return typeof id === 'number' && Number.isFinite(id) ? id : typeof id === 'string' ? id.slice(0, 100) : 0;
}

export const beem: Aggregator<typeof BeemRequest> = {
  name: 'beem',
  path: '/api/ussd/beem',
  summary: "One request of a USSD session in Beem Africa's format",
  body: BeemRequest,
  answerSchema: BeemAnswer,
  turn(body, deps) {
    const session = { sessionId: body.session_id, msisdn: body.msisdn };
    const command = body.command.toLowerCase();
    if (command === 'initiate') {
      const serviceCode = body.serviceCode ?? deps.beemServiceCode ?? '';
      return dialTurn(this.name, { ...session, serviceCode, text: '' });
    }
    if (command === 'continue')
      return dialTurn(this.name, { ...session, text: (body.payload.response ?? '').trim(), latest: {} });
    if (command === 'terminate') return endTurn(this.name, body.session_id, 'terminate');
    return { kind: 'invalid', problem: `command ${body.command.slice(0, 20)}` };
  },
  answer(screen, request) {
    const { more, message } = shown(screen);
    return {
      msisdn: echo(request, 'msisdn'),
      operator: echo(request, 'operator'),
      session_id: echo(request, 'session_id'),
      command: more ? 'continue' : 'terminate',
      payload: { request_id: requestIdOf(request), request: message },
    };
  },
};
