// Thread: main
// POST /calls/:callId/sync, PATCH /calls/:callId/update and GET /calls/session/:sessionId (UCAN, the caller's calls
// only), and GET /calls/:callId/key (the live agent's, x-api-key): the live-call routes of the reference runtime that
// SDK 1.4.0's useLiveAgent calls. Each change is read, decided (lifecycle.ts) and written revision-checked, redone
// when another write got in first.
import { timingSafeEqual, createHash } from 'node:crypto';
import { declarer } from '../../http/route.js';
import type { HttpRequest } from '../../http/types.js';
import { reply } from '../../http/types.js';
import { retryOnConflict } from '../../store/revision.js';
import { ErrorBodySchema } from '../routes/answer-schemas.js';
import { oracleErrors } from '../errors.js';
import { actorCall, AUTH_RESPONSES, route } from '../routes/deps.js';
import type { SessionReads } from '../routes/session-reads.js';
import { callErrors } from './errors.js';
import { CallRefusal, syncedCall, updatedCall, type CallContent } from './lifecycle.js';
import { CALLS_PER_SESSION_MAX, type CallRecord, type CallRepository } from './records.js';
import {
  CallIdParamsSchema,
  CallKeyAnswerSchema,
  CallListSchema,
  CallSessionParamsSchema,
  SyncCallAnswerSchema,
  SyncCallBodySchema,
  UpdateCallAnswerSchema,
  UpdateCallBodySchema,
} from './schemas.js';

export interface CallRouteDeps {
  readonly calls: CallRepository;
  readonly reads: SessionReads;
  readonly now?: () => string;
}

const tags = ['Live calls'];
const notFound = {
  description: 'No such call of this user (unknown and foreign ids answer alike)',
  schema: ErrorBodySchema,
};

/** A lifecycle refusal as the face's error answer. */
async function decided<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CallRefusal) throw callErrors.refused(error);
    throw error;
  }
}

export function callRoutes({ calls, reads, now = () => new Date().toISOString() }: CallRouteDeps) {
  const ownSession = async (sessionId: string, userDid: string) => {
    if (!(await actorCall(() => reads.owns(sessionId, userDid)))) throw oracleErrors.sessionNotFound();
  };
  const roomLeft = async (call: CallRecord, current: CallRecord | undefined) => {
    if (call.sessionId === undefined || current?.sessionId !== undefined) return;
    const held = await calls.listSession(call.userDid, call.sessionId, CALLS_PER_SESSION_MAX);
    if (held.length >= CALLS_PER_SESSION_MAX)
      throw new CallRefusal(409, `A session holds at most ${CALLS_PER_SESSION_MAX} calls`);
  };
  return [
    route({
      method: 'POST',
      path: '/calls/:callId/sync',
      auth: 'ucan',
      summary: "Record a live call the caller started (no body: SDK 1.4.0's sync), or add to what it holds",
      tags,
      params: CallIdParamsSchema,
      body: SyncCallBodySchema,
      responses: {
        201: { description: 'Synced (again)', schema: SyncCallAnswerSchema },
        404: { description: "The named session is not one of the caller's", schema: ErrorBodySchema },
        409: {
          description: 'The id is synced by another user, a field differs from the one synced, or the session is full',
          schema: ErrorBodySchema,
        },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: { did }, params: { callId }, body }) {
        const content: CallContent = body ?? {};
        if (content.sessionId !== undefined) await ownSession(content.sessionId, did);
        await decided(() =>
          retryOnConflict(async () => {
            const current = await calls.get(callId);
            const next = syncedCall(current?.value, callId, did, content, now());
            if (current && next === current.value) return;
            await roomLeft(next, current?.value);
            await (current ? calls.update(next, current.revision) : calls.create(next));
          }),
        );
        return reply.json(201, { callId });
      },
    }),

    route({
      method: 'PATCH',
      path: '/calls/:callId/update',
      auth: 'ucan',
      summary: "Move the caller's call on: `active` when it starts, `ended` when it ends (pending -> active -> ended)",
      tags,
      params: CallIdParamsSchema,
      body: UpdateCallBodySchema,
      responses: {
        200: { description: 'The call as it is now', schema: UpdateCallAnswerSchema },
        404: notFound,
        409: { description: 'A transition the call cannot make (e.g. from `ended`)', schema: ErrorBodySchema },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: { did }, params: { callId }, body }) {
        const call = await decided(() =>
          retryOnConflict(async () => {
            const current = await calls.get(callId);
            const next = updatedCall(current?.value, did, body, now());
            if (current && next !== current.value) await calls.update(next, current.revision);
            return next;
          }),
        );
        const { callStatus, callStartedAt, callEndedAt } = call;
        return reply.json(200, { callId, callStatus, callStartedAt, callEndedAt });
      },
    }),

    route({
      method: 'GET',
      path: '/calls/session/:sessionId',
      auth: 'ucan',
      summary: "The caller's calls in one of their sessions",
      tags,
      params: CallSessionParamsSchema,
      responses: {
        200: { description: 'The calls, oldest sync first', schema: CallListSchema },
        404: { description: 'No such session of this user', schema: ErrorBodySchema },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: { did }, params: { sessionId } }) {
        await ownSession(sessionId, did);
        const found = await calls.listSession(did, sessionId, CALLS_PER_SESSION_MAX);
        return reply.json(200, { calls: found.map(callView) });
      },
    }),
  ];
}

/** A call as listed: the reference's shape (its Matrix event's content and `id`), without the media key. */
function callView({ encryptionKey: _key, createdAt: _c, updatedAt: _u, callId, ...call }: CallRecord) {
  return { id: callId, type: 'm.ixo.oracles_call' as const, ...call };
}

/** Who called the key route: the live agent, with LIVE_AGENT_AUTH_API_KEY. */
export interface LiveAgent {
  readonly liveAgent: true;
}

/**
 * The x-api-key guard of the key route: 403 while no key is configured (the route then serves no one), 401 without
 * the header or with another key. Keys are compared as SHA-256 digests in constant time.
 */
export function liveAgentGuard(apiKey: string | undefined): (req: HttpRequest) => LiveAgent {
  const expected = apiKey === undefined ? undefined : digest(apiKey);
  return function liveAgentKey(req) {
    if (!expected) throw callErrors.keyOff();
    const given = req.headers['x-api-key'];
    if (typeof given !== 'string' || given === '') throw callErrors.missingKey();
    if (!timingSafeEqual(digest(given), expected)) throw callErrors.invalidKey();
    return { liveAgent: true };
  };
}

const digest = (key: string) => createHash('sha256').update(key).digest();

export function callKeyRoutes({ calls, oracleDid }: { calls: CallRepository; oracleDid: string }) {
  return [
    declarer<LiveAgent>()({
      method: 'GET',
      path: '/calls/:callId/key',
      auth: 'api-key',
      summary: "The call's media key, for the live agent that joins it (x-api-key: LIVE_AGENT_AUTH_API_KEY)",
      tags,
      params: CallIdParamsSchema,
      responses: {
        200: { description: 'The key as the call was synced with it', schema: CallKeyAnswerSchema },
        401: { description: 'No x-api-key, or another key', schema: ErrorBodySchema },
        403: { description: 'LIVE_AGENT_AUTH_API_KEY is not set: the route serves no one', schema: ErrorBodySchema },
        404: { description: 'No such call, or it was synced without a key', schema: ErrorBodySchema },
        400: AUTH_RESPONSES[400],
      },
      async handler({ params: { callId } }) {
        const call = (await calls.get(callId))?.value;
        if (!call) throw callErrors.callNotFound();
        if (!call.encryptionKey) throw callErrors.noEncryptionKey();
        return reply.json(200, { encryptionKey: call.encryptionKey, oracleDid, userDid: call.userDid });
      },
    }),
  ];
}
