// Thread: main (front door)
// The live-call routes' input and answer schemas (valibot), which validate requests and feed the
// OpenAPI document. Bounds keep every record small: a call is a few hundred bytes whatever a client sends.
import * as v from 'valibot';
import { SessionIdParamsSchema } from '../routes/schemas.js';
import { CALL_STATUSES, CALL_TYPES } from './records.js';

export const CALL_ID_MAX = 512;
export const ENCRYPTION_KEY_MAX = 4096;

const text = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.nonEmpty('should not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
  );

/** Printable ASCII but `/`, `@` and `|`, on each side of the one `@`: `<eventId>@<roomId>`, as the SDK builds it. */
const CALL_ID = /^[!-.0-?A-{}~]+@[!-.0-?A-{}~]+$/;

export const CallIdParamsSchema = v.object({
  callId: v.pipe(
    v.string(),
    v.maxLength(CALL_ID_MAX, `must be at most ${CALL_ID_MAX} characters`),
    v.regex(CALL_ID, 'must be <eventId>@<roomId> (the Matrix call event and its room)'),
    v.description('`<eventId>@<roomId>`: the Matrix event of the call and its room, as the SDK names it'),
  ),
});

export const CallSessionParamsSchema = SessionIdParamsSchema;

const timestamp = v.pipe(
  v.string('must be a string'),
  v.maxLength(40, 'must be at most 40 characters'),
  v.isoTimestamp('must be an ISO 8601 timestamp such as 2026-01-01T10:00:00.000Z'),
  v.check(
    (value) => Number.isFinite(Date.parse(value)),
    'must be an ISO 8601 timestamp such as 2026-01-01T10:00:00.000Z',
  ),
);

/**
 * The body of POST /calls/:id/sync: absent (what SDK 1.4.0 sends), or the content of the call's Matrix event, whose
 * other fields (callStatus, timestamps, DIDs) are ignored: a call starts pending, owned by its caller.
 */
export const SyncCallBodySchema = v.optional(
  v.object(
    {
      sessionId: v.optional(v.pipe(text(128), v.description("The chat session of the call (one of the caller's)"))),
      callType: v.optional(v.picklist(CALL_TYPES, `must be one of ${CALL_TYPES.join(', ')}`)),
      encryptionKey: v.optional(
        v.pipe(text(ENCRYPTION_KEY_MAX), v.description('The media key, as the client encrypted it for the oracle')),
      ),
      agentVoice: v.optional(text(200)),
      language: v.optional(text(64)),
    },
    'body must be a JSON object',
  ),
);

/** The body SDK 1.4.0 sends to PATCH /calls/:id/update; at least one field, nothing else. */
export const UpdateCallBodySchema = v.pipe(
  v.strictObject(
    {
      callStatus: v.optional(v.picklist(['active', 'ended'] as const, 'must be one of active, ended')),
      callStartedAt: v.optional(timestamp),
      callEndedAt: v.optional(timestamp),
    },
    'body must be a JSON object with only callStatus, callStartedAt and callEndedAt',
  ),
  v.check(
    (body) => body.callStatus !== undefined || body.callStartedAt !== undefined || body.callEndedAt !== undefined,
    'body must give callStatus, callStartedAt or callEndedAt',
  ),
);

const iso = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));

export const SyncCallAnswerSchema = v.object({ callId: v.string() });

export const UpdateCallAnswerSchema = v.object({
  callId: v.string(),
  callStatus: v.picklist(CALL_STATUSES),
  callStartedAt: iso('ISO 8601, once the call started'),
  callEndedAt: iso('ISO 8601, once it ended'),
});

export const CallKeyAnswerSchema = v.object({
  encryptionKey: v.pipe(v.string(), v.description('The media key as its owner synced it')),
  oracleDid: v.string(),
  userDid: v.string(),
});

export const CallSchema = v.object({
  id: v.pipe(v.string(), v.description('The call id')),
  type: v.literal('m.ixo.oracles_call'),
  sessionId: v.string(),
  userDid: v.string(),
  callType: v.optional(v.picklist(CALL_TYPES)),
  callStatus: v.picklist(CALL_STATUSES),
  callStartedAt: iso('ISO 8601, once the call started'),
  callEndedAt: iso('ISO 8601, once it ended'),
  agentVoice: v.optional(v.string()),
  language: v.optional(v.string()),
});

export const CallListSchema = v.object({
  calls: v.pipe(v.array(CallSchema), v.description('Oldest sync first; the media key is left out')),
});
