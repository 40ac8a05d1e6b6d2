// POST /api/ussd and the operator routes.
import * as v from 'valibot';
import type { Logger } from '../log.js';
import { ussdStep } from '../metrics/catalogue.js';
import { TOO_MANY_REQUESTS } from '../docs/index.js';
import { declarer, mountRoutes, type RouteContext } from '../http/route.js';
import type { Router } from '../http/router.js';
import type { OperatorGuard } from '../http/operator-guard.js';
import { reply } from '../http/types.js';
import type { ActorRuntime } from '../runtime/actor-runtime.js';
import { fitsKey } from '../store/keys.js';
import { answerOf, INVALID_INPUT } from './answers.js';
import { USSD_ACTOR, type DialMessage } from './protocol.js';
import { UssdRequestSchema } from './schema.js';
import { activeSessionIds, isLive, type SessionDb } from './session-records.js';


const UssdAnswerSchema = v.pipe(
  v.string(),
  v.regex(/^(CON|END) /),
  v.examples(['CON Welcome\n1. Know More\n2. Account', INVALID_INPUT]),
);

interface UssdRouteDeps {
  runtime: ActorRuntime;
  sessions: SessionDb;
  operatorOnly: OperatorGuard;
  log: Logger;
}

/** Operator routes identify no one: the guard only lets the operator through. */
const route = declarer<void>();

export function registerUssdRoutes(router: Router, deps: UssdRouteDeps): void {
  const { operatorOnly, log } = deps;
  const context: RouteContext<void> = {
    guards: { operator: operatorOnly },
    // A gateway ends the session on any status but 200: bad input is an END screen too.
    invalid(problem, req) {
      log.debug({ reqId: req.requestId, problems: problem.issues?.map((i) => i.message) ?? [problem.bodyError] }, 'invalid USSD request');
      ussdStep.invalid_request.inc();
      return reply.text(200, INVALID_INPUT);
    },
  };
  mountRoutes(router, context, ussdRoutes(deps));
}

function ussdRoutes({ runtime, sessions, log }: UssdRouteDeps) {
  return [
    route({
      method: 'POST',
      path: '/api/ussd',
      auth: 'public',
      summary: 'One user input of a USSD session; answers a CON or END screen as text/plain',
      tags: ['ussd'],
      body: UssdRequestSchema,
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
          return reply.text(200, await runtime.ref(USSD_ACTOR, sessionId).send(message));
        } catch (err) {
          log.error({ err, reqId: req.requestId, sessionId }, 'USSD actor failed');
          return reply.text(200, answerOf(err));
        }
      },
    }),

    route({
      method: 'GET',
      path: '/api/ussd/debug/:sessionId',
      auth: 'operator',
      summary: 'Operator: one live USSD session (never contains a PIN)',
      tags: ['ussd', 'operator'],
      handler({ req }) {
        const { sessionId } = req.params;
        const session = fitsKey(sessionId) ? sessions.get(sessionId) : undefined; // longer ids are never stored
        const activeSessions = activeSessionIds(sessions);
        if (!isLive(session)) {
          return reply.json(404, { sessionId, debugInfo: { error: 'Session not found' }, activeSessions });
        }
        return reply.json(200, {
          sessionId,
          debugInfo: {
            state: session.state,
            context: session.context,
            status: 'active',
            createdAt: new Date(session.createdAt).toISOString(),
            updatedAt: new Date(session.updatedAt).toISOString(),
            expiresAt: new Date(session.expiresAt).toISOString(),
          },
          activeSessions,
        });
      },
    }),

    route({
      method: 'GET',
      path: '/api/ussd/sessions',
      auth: 'operator',
      summary: 'Operator: identifiers of all live USSD sessions',
      tags: ['ussd', 'operator'],
      handler() {
        const ids = activeSessionIds(sessions);
        return reply.json(200, { activeSessions: ids, count: ids.length });
      },
    }),
  ];
}
