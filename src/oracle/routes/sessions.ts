// Thread: main
// POST /sessions, GET /sessions, DELETE /sessions/:sessionId, GET /sessions/:sessionId/messages (paged history).
import { randomUUID } from 'node:crypto';
import { reply } from '../../http/types.js';
import {
  ErrorBodySchema,
  HistoryPageSchema,
  SessionDeletedSchema,
  SessionListSchema,
  SessionSchema,
} from './answer-schemas.js';
import { CHAT_ACTOR, type AbortSignalMessage, type CreateSessionMessage } from '../chat/chat-protocol.js';
import { oracleErrors } from '../errors.js';
import { HistoryQuerySchema, SessionIdParamsSchema, SessionListQuerySchema } from './schemas.js';
import { actorCall, AUTH_RESPONSES, route, type OracleRouteDeps } from './deps.js';
import { cachedSessionLists } from './session-list-cache.js';

const tags = ['Sessions'];
const JSON_TYPE = 'application/json; charset=utf-8';

export function sessionRoutes(deps: OracleRouteDeps) {
  const { actors, oracle, sessions, reads } = deps;
  const listJson = cachedSessionLists(sessions);
  return [
    route({
      method: 'POST',
      path: '/sessions',
      auth: 'ucan',
      summary: 'Create a chat session',
      tags,
      responses: {
        201: { description: 'The new session', schema: SessionSchema },
        401: AUTH_RESPONSES[401],
        409: {
          description: 'The user holds as many sessions as allowed (CHAT_SESSIONS_PER_USER_MAX; `limit`)',
          schema: ErrorBodySchema,
        },
      },
      async handler({ identity: { did }, req }) {
        const message: CreateSessionMessage = { type: 'create', userDid: did, ...oracle };
        const created = await actorCall(() => actors.ref(CHAT_ACTOR, randomUUID(), req.trace).send(message));
        return reply.json(201, created.session);
      },
    }),

    route({
      method: 'GET',
      path: '/sessions',
      auth: 'ucan',
      summary: "List the authenticated user's sessions, newest first",
      tags,
      query: SessionListQuerySchema,
      responses: { 200: { description: 'One page and the total', schema: SessionListSchema }, ...AUTH_RESPONSES },
      async handler({ identity: { did }, query: { limit, offset } }) {
        // Read from the repository's per-user index on this thread, not through actors: the page spans sessions
        // of many actors (asking each would wake them all), and the index changes in the same write as each
        // record, which its actor makes before it answers, so the list is as fresh as any answer given (the
        // cache keeps that: session-list-cache.ts).
        return reply.raw(200, JSON_TYPE, await listJson(did, { offset, limit }));
      },
    }),

    route({
      method: 'GET',
      path: '/sessions/:sessionId/messages',
      auth: 'ucan',
      summary: 'A page of the messages of a session: the newest, or before / after a cursor',
      tags,
      params: SessionIdParamsSchema,
      query: HistoryQuerySchema,
      responses: {
        200: {
          description: 'One page, oldest first, with the cursors to the pages around it',
          schema: HistoryPageSchema,
        },
        404: {
          description: 'No such session of this user (unknown and foreign ids answer alike)',
          schema: ErrorBodySchema,
        },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: user, params: { sessionId }, query, req }) {
        return reply.json(200, await actorCall(() => reads.history(sessionId, user.did, query, req.trace)));
      },
    }),

    route({
      method: 'DELETE',
      path: '/sessions/:sessionId',
      auth: 'ucan',
      summary: 'Delete a session and its transcript',
      tags,
      params: SessionIdParamsSchema,
      responses: {
        200: { description: 'Deleted', schema: SessionDeletedSchema },
        404: { description: 'No such session of this user', schema: ErrorBodySchema },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: user, params: { sessionId }, req }) {
        // Asked of the session's actor (routes/session-reads.ts), answered at once even while a turn runs; the
        // actor checks again when it deletes.
        if (!(await actorCall(() => reads.owns(sessionId, user.did, req.trace)))) throw oracleErrors.sessionNotFound();
        // Stop a generation in flight and every message still queued, then delete in the actor's mailbox.
        const stop: AbortSignalMessage = {
          type: 'abort',
          userDid: user.did,
          supersededBy: randomUUID(),
          at: Date.now(),
        };
        const actor = actors.ref(CHAT_ACTOR, sessionId, req.trace);
        await actorCall(() => actor.signal(stop));
        await actorCall(() => actor.send({ type: 'delete', userDid: user.did }));
        return reply.json(200, { message: 'Session deleted successfully' });
      },
    }),
  ];
}
