// Thread: main (front door)
// The operator routes. One session's live state comes from its actor (which owns
// it); the live set comes from the session repository's expiry index, never a scan of the session records.
import { HttpError } from '../../http/errors.js';
import { declarer } from '../../http/route.js';
import { reply } from '../../http/types.js';
import type { Actors } from '../../runtime/router.js';
import { ActorBusyError, HostUnavailableError } from '../../runtime/errors.js';
import { fitsKey } from '../../store/keys.js';
import { USSD_ACTOR, type SessionView } from '../protocol.js';
import type { UssdLiveIndex } from '../sessions/repository.js';
import type { UssdRouteDeps } from './index.js';

/** Operator routes identify no one: the guard only lets the operator through. */
const route = declarer<void>();

/** The operator routes' one error of their own, and its meaning (docs/errors.md, `npm run docs:errors`). */
export const ussdOperatorErrors = {
  busy: () => HttpError.of(503, 'The USSD session is busy; try again in a moment', undefined, { 'Retry-After': '1' }),
};
export const USSD_OPERATOR_ERROR_MEANINGS: { readonly [K in keyof typeof ussdOperatorErrors]: string } = {
  busy: "GET /api/ussd/debug/:sessionId while the session's actor cannot answer (mailbox full, host restarting)",
};

/** Identifiers of the live sessions, in identifier order. */
async function liveSessionIds(sessions: UssdLiveIndex): Promise<string[]> {
  return (await sessions.live(Date.now())).map(({ sessionId }) => sessionId).sort();
}

/** The session's live state from its actor; a 503 when the actor cannot answer now (mailbox full, host restarting). */
async function inspect(actors: Actors, sessionId: string): Promise<SessionView | null> {
  try {
    return await actors.ref(USSD_ACTOR, sessionId).send({ type: 'inspect' });
  } catch (error) {
    if (error instanceof ActorBusyError || error instanceof HostUnavailableError) {
      throw ussdOperatorErrors.busy();
    }
    throw error;
  }
}

export function operatorRoutes({ actors, sessions }: UssdRouteDeps) {
  return [
    route({
      method: 'GET',
      path: '/api/ussd/debug/:sessionId',
      auth: 'operator',
      summary: 'Operator: one live USSD session (never contains a PIN)',
      tags: ['ussd', 'operator'],
      async handler({ req }) {
        const { sessionId } = req.params;
        // Longer ids are never stored: no actor is woken for them.
        const session = fitsKey(sessionId) ? await inspect(actors, sessionId) : null;
        const activeSessions = await liveSessionIds(sessions);
        if (!session) {
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
      async handler() {
        const ids = await liveSessionIds(sessions);
        return reply.json(200, { activeSessions: ids, count: ids.length });
      },
    }),
  ];
}
