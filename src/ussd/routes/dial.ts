// Thread: main (front door)
// POST /api/ussd, one gateway request, answered by the session's actor.
import * as v from 'valibot';
import { TOO_MANY_REQUESTS } from '../../docs/index.js';
import { declarer } from '../../http/route.js';
import { reply, type HttpRequest } from '../../http/types.js';
import { deadlineIn } from '../../runtime/deadline-signals.js';
import { DeadlineExceededError, failureKind } from '../../runtime/errors.js';
import { isStorageUnavailable } from '../../store/write-guard.js';
import { answerOf, INVALID_INPUT, SERVICE_UNAVAILABLE } from '../answers.js';
import { USSD_ACTOR, type DialMessage } from '../protocol.js';
import { checkUssdRequest, UssdRequestSchema } from '../schema.js';
import type { UssdRouteDeps } from './index.js';
import { ussdServiceSessionsEnded } from '../../metrics/catalogue.js';
import type { ServedServices } from '../services/served.js';
import { isAskNeeded } from '../services/ask.js';
import { askAnswered } from './ask.js';
import type { Context } from '../../telemetry/index.js';

const UssdAnswerSchema = v.pipe(
  v.string(),
  v.regex(/^(CON|END) /),
  v.examples(['CON Welcome\n1. Know More\n2. Account', INVALID_INPUT]),
);

/**
 * What the front door answers a USSD step once a drain stopped serving (past SHUTDOWN_SERVE_MS): the contract's
 * fault answer, which a gateway shows the user, never the door's 503.
 */
export const USSD_DRAIN_REFUSALS = {
  'POST /api/ussd': reply.text(200, SERVICE_UNAVAILABLE, { 'Retry-After': '1' }),
};

/** The gateway is not identified: the route is public (rate-limited by the front door). */
const route = declarer<void>();

/**
 * The step's screen from the session's actor, under the step's one deadline (USSD_STEP_TIMEOUT_MS from now): the
 * actor runs under it wherever it is (its host, another node), and past it the step rejects with its
 * DeadlineExceededError, which failedStep answers. A gateway must be answered before it gives up; a step that still
 * lands later is what a gateway's retry of the same text then reads back.
 */
export async function stepOf(deps: UssdRouteDeps, message: DialMessage, trace: Context | undefined): Promise<string> {
  const deadline = deadlineIn(deps.stepTimeoutMs ?? 15_000);
  const reply = await deps.actors.ref(USSD_ACTOR, message.sessionId, trace).send(message, deadline);
  // An ask state's question: the agent's answer, or `working` when it takes longer than the step's budget.
  return isAskNeeded(reply) ? askAnswered(deps, message.sessionId, reply, deadline) : reply;
}

/**
 * The END screen answering a step that failed or passed its deadline, logged and counted: every route of a
 * gateway answers a screen, never a 5xx.
 */
export function failedStep({ log, services }: UssdRouteDeps, err: unknown, message: DialMessage, req: HttpRequest) {
  // A failure that passes (backpressure, a host or node going away, a lost race, the cluster out of reach) is what
  // an operator expects under load and failover: a warning. A full disk is told once, by the storage watch
  // (store/writable.ts). Anything else (a fault, or a refusal no USSD screen answers) is an error.
  const level = isStorageUnavailable(err) ? 'debug' : failureKind(err) === 'transient' ? 'warn' : 'error';
  log[level]({ err, reqId: req.requestId, sessionId: message.sessionId }, 'USSD actor failed');
  // The END answer ends the session for the user: counted for the service the code names.
  const reason = err instanceof DeadlineExceededError ? 'timeout' : 'error';
  ussdServiceSessionsEnded.with(serviceOfCode(services, message.serviceCode), 'unknown', reason).inc();
  return answerOf(err);
}

export function dialRoutes(deps: UssdRouteDeps) {
  return [
    route({
      method: 'POST',
      path: '/api/ussd',
      auth: 'public',
      summary: 'One user input of a USSD session; answers a CON or END screen as text/plain',
      tags: ['ussd'],
      body: UssdRequestSchema,
      bodyFastPath: checkUssdRequest,
      bodyContentTypes: ['application/json', 'application/x-www-form-urlencoded'],
      responses: {
        200: {
          description:
            '`CON <screen>`: the session continues and the user may answer; `END <screen>`: the session is over. ' +
            'Invalid requests and failures are also 200 END answers: a gateway ends the session on any other status.',
          contentType: 'text/plain',
          schema: UssdAnswerSchema,
        },
        429: TOO_MANY_REQUESTS,
      },
      async handler({ body: { sessionId, phoneNumber, serviceCode, text }, req }) {
        const message: DialMessage = { type: 'dial', sessionId, phoneNumber, serviceCode, text };
        try {
          return reply.text(200, await stepOf(deps, message, req.trace));
        } catch (err) {
          return reply.text(200, failedStep(deps, err, message, req));
        }
      },
    }),
  ];
}

/** The id of the service a code dials (its own, or the one of the code it extends); `unknown` when none. */
function serviceOfCode(services: ServedServices | undefined, code: string): string {
  const all = services?.current() ?? [];
  for (let candidate = code; ; ) {
    const found = all.find((service) => service.codes.some((entry) => entry.code === candidate));
    if (found) return found.id;
    const cut = candidate.lastIndexOf('*');
    if (cut <= 0) return 'unknown';
    candidate = `${candidate.slice(0, cut)}#`;
  }
}
