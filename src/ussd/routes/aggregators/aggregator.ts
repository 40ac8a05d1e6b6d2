// Thread: main (front door)
// What every aggregator adapter shares. An adapter maps its provider's request to a
// step of the same session actor the Africa's Talking route drives (a dial, an input, or the gateway's end of
// the session) and the screen back to the provider's answer. Field mappings and sources: docs/ussd-aggregators.md.
import * as v from 'valibot';
import { TOO_MANY_REQUESTS } from '../../../docs/index.js';
import { declarer, mountRoutes } from '../../../http/route.js';
import type { Router } from '../../../http/router.js';
import { reply } from '../../../http/types.js';
import { ussdStep } from '../../../metrics/catalogue.js';
import { INVALID_INPUT } from '../../answers.js';
import type { DialMessage } from '../../protocol.js';
import { E164, MAX_SESSION_ID, MAX_TEXT, PRINTABLE, SERVICE_CODE } from '../../schema.js';
import type { GatewayEnd, LatestInput } from '../../session.js';
import { failedStep, stepOf } from '../dial.js';
import type { UssdRouteDeps } from '../index.js';
import { recordGatewayEnd } from './gateway-end.js';

/** What one provider request asks for: a step of the session, the gateway's end of it, or nothing valid. */
export type Turn =
  | { kind: 'dial'; dial: DialMessage }
  | { kind: 'end'; sessionId: string; end: GatewayEnd }
  | { kind: 'invalid'; problem: string };

export interface Aggregator<B extends v.GenericSchema = v.GenericSchema> {
  /** The session id prefix and the metrics' `gateway` label: `hubtel`. */
  name: string;
  path: string;
  summary: string;
  /** The provider's request fields (unknown fields are dropped; a body that does not match is refused). */
  body: B;
  /** The provider's answer, for the docs. */
  answerSchema: v.GenericSchema;
  turn(body: v.InferOutput<B>, deps: UssdRouteDeps): Turn;
  /**
   * The provider's answer showing `screen` (`CON ...` continues, `END ...` ends), echoing the request's own
   * fields; `request` may be anything (a refused body, another provider's fields).
   */
  answer(screen: string, request: unknown): unknown;
}

/** A string field of a request as it came (numbers as their digits), at most 100 characters; '' when absent. */
export function echo(request: unknown, name: string): string {
  const value = request && typeof request === 'object' ? (request as Record<string, unknown>)[name] : undefined;
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  return typeof text === 'string' ? text.slice(0, MAX_SESSION_ID) : '';
}

/** A JSON boolean, or its word as a string (gateways differ). */
export const flag = v.union([
  v.boolean(),
  v.pipe(
    v.picklist(['true', 'false', 'True', 'False']),
    v.transform((word) => word.toLowerCase() === 'true'),
  ),
]);

/** A string, or a number turned into its digits (MSISDNs and ids arrive as both). */
export const digits = v.union([
  v.string(),
  v.pipe(
    v.number(),
    v.transform((n) => String(n)),
  ),
]);

/** The E.164 form of a gateway's MSISDN (`233246912184` or `+233...`); undefined when it is not one. */
export function e164(msisdn: string): string | undefined {
  const trimmed = msisdn.trim();
  const phone = trimmed.startsWith('+') ? trimmed : `+${trimmed}`;
  return E164.test(phone) ? phone : undefined;
}

/** A dialled code as the other routes take it (`*713*5#`): the provider's own form with or without `*` and `#`. */
export function serviceCodeOf(code: string): string | undefined {
  const bare = code.trim().replace(/^\*/, '').replace(/#$/, '');
  const full = `*${bare}#`;
  return SERVICE_CODE.test(full) ? full : undefined;
}

interface DialFields {
  sessionId: string;
  msisdn: string;
  /** The dialled code: required for a new session; later inputs may not carry one. */
  serviceCode?: string;
  text: string;
  /** Set for an input of a provider that sends only the latest one. */
  latest?: LatestInput;
}

/**
 * A dial or an input checked as the Africa's Talking route checks its own (session id, E.164 number, code,
 * text), with the session id under the provider's prefix: the same id from two providers names two sessions.
 */
export function dialTurn(name: string, fields: DialFields): Turn {
  const raw = fields.sessionId.trim();
  const sessionId = `${name}:${raw}`;
  if (raw === '' || sessionId.length > MAX_SESSION_ID || !PRINTABLE.test(raw))
    return { kind: 'invalid', problem: 'session id' };
  const phoneNumber = e164(fields.msisdn);
  if (!phoneNumber) return { kind: 'invalid', problem: 'msisdn is not a phone number' };
  const serviceCode = fields.serviceCode === undefined ? '' : serviceCodeOf(fields.serviceCode);
  if (serviceCode === undefined) return { kind: 'invalid', problem: 'service code' };
  if (fields.latest === undefined && serviceCode === '') return { kind: 'invalid', problem: 'no service code' };
  if (fields.text.length > MAX_TEXT || !PRINTABLE.test(fields.text)) return { kind: 'invalid', problem: 'text' };
  const dial: DialMessage = { type: 'dial', sessionId, phoneNumber, serviceCode, text: fields.text };
  if (fields.latest) dial.latest = fields.latest;
  return { kind: 'dial', dial };
}

/** The gateway's end of a session, under the provider's prefix. */
export function endTurn(name: string, sessionId: string, status: string): Turn {
  const raw = sessionId.trim();
  if (raw === '' || raw.length + name.length + 1 > MAX_SESSION_ID) return { kind: 'invalid', problem: 'session id' };
  return { kind: 'end', sessionId: `${name}:${raw}`, end: { gateway: name, status } };
}

/** The screen shown without its `CON `/`END ` prefix, and whether the session continues. */
export function shown(screen: string): { more: boolean; message: string } {
  return { more: screen.startsWith('CON '), message: screen.slice(4) };
}

const route = declarer<void>();

/**
 * Mounts an adapter's route with its own answer to bad input: the provider's end form with the invalid-input
 * text, HTTP 200 (a gateway ends the session on any other status), never a 5xx.
 */
export function mountAggregator(router: Router, adapter: Aggregator, deps: UssdRouteDeps): void {
  const refuse = (problem: unknown, request: unknown, reqId: string) => {
    deps.log.debug({ reqId, aggregator: adapter.name, problem }, 'invalid USSD aggregator request');
    ussdStep.invalid_request.inc();
    return reply.json(200, adapter.answer(INVALID_INPUT, request));
  };
  const declared = route({
    method: 'POST',
    path: adapter.path,
    auth: 'public',
    summary: adapter.summary,
    tags: ['ussd'],
    body: adapter.body,
    responses: {
      200: {
        description:
          "The screen in the provider's own answer format: continue, or end. Invalid requests and failures are also " +
          '200 answers in that format, ending the session: see docs/ussd-aggregators.md.',
        schema: adapter.answerSchema,
      },
      429: TOO_MANY_REQUESTS,
    },
    async handler({ body, req }) {
      const turn = adapter.turn(body, deps);
      if (turn.kind === 'invalid') return refuse(turn.problem, body, req.requestId);
      if (turn.kind === 'end') {
        await recordGatewayEnd(deps, turn.sessionId, turn.end, req);
        return reply.json(200, adapter.answer('END ', body));
      }
      let screen: string;
      try {
        screen = await stepOf(deps, turn.dial, req.trace);
      } catch (err) {
        screen = failedStep(deps, err, turn.dial, req);
      }
      return reply.json(200, adapter.answer(screen, body));
    },
  });
  mountRoutes(
    router,
    {
      guards: {},
      invalid: (problem, req) =>
        refuse(problem.issues?.map((issue) => issue.message) ?? problem.bodyError, req.body, req.requestId),
    },
    [declared],
  );
}
