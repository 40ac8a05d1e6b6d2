// Thread: main
// Schemas of the oracle's answers, for the OpenAPI document (routes pass them as `responses`).
// The shapes follow oracle-wire-format.md so existing clients read them unchanged.
import * as v from 'valibot';

const iso = (description: string) => v.pipe(v.string(), v.isoTimestamp(), v.description(description));

export const ErrorBodySchema = v.object({
  statusCode: v.pipe(v.number(), v.integer()),
  message: v.union([v.string(), v.array(v.string())]),
  error: v.string(),
  reason: v.optional(v.pipe(v.string(), v.description('Why a UCAN or a delegation was refused'))),
});

export const PaymentRequiredSchema = v.object({
  statusCode: v.literal(402),
  message: v.string(),
  error: v.string(),
  claims: v.pipe(v.array(v.string()), v.description('The claim recorded for this refused message')),
  outstandingClaims: v.pipe(v.array(v.string()), v.description('Every unsettled claim of the user, oldest first')),
});

export const SessionSchema = v.object({
  sessionId: v.string(),
  oracleName: v.string(),
  title: v.pipe(v.string(), v.description('"Untitled" until the first message names it')),
  createdAt: iso('Creation time'),
  lastUpdatedAt: iso('Time of the last message'),
  oracleDid: v.string(),
});

export const SessionListSchema = v.object({
  sessions: v.pipe(v.array(SessionSchema), v.description('Newest lastUpdatedAt first')),
  total: v.pipe(v.number(), v.integer(), v.description("All of the user's sessions")),
});

export const SessionDeletedSchema = v.object({ message: v.literal('Session deleted successfully') });

export const ToolCallItemSchema = v.object({
  id: v.string(),
  name: v.string(),
  args: v.record(v.string(), v.unknown()),
  output: v.optional(v.string()),
  status: v.optional(v.picklist(['done', 'error'])),
  interrupted: v.optional(v.pipe(v.literal(true), v.description('The turn stopped while this call ran: no result'))),
});

export const AttachmentItemSchema = v.object({
  mxcUri: v.optional(v.string()),
  eventId: v.optional(v.string()),
  filename: v.string(),
  mimetype: v.string(),
  size: v.optional(v.number()),
  category: v.optional(v.string()),
});

export const MessageItemSchema = v.object({
  id: v.string(),
  type: v.picklist(['ai', 'human']),
  content: v.string(),
  toolCalls: v.optional(v.array(ToolCallItemSchema)),
  reasoning: v.optional(v.string()),
  status: v.optional(
    v.pipe(
      v.picklist(['aborted', 'failed']),
      v.description('An ai item of a turn that was stopped or failed (its text as streamed)'),
    ),
  ),
  aborted: v.optional(v.literal(true)),
  failed: v.optional(v.literal(true)),
  attachments: v.optional(v.pipe(v.array(AttachmentItemSchema), v.description("A human message's attachments"))),
  attachment: v.optional(
    v.pipe(AttachmentItemSchema, v.description('The first of them, for clients that read only this')),
  ),
  isComplete: v.literal(true),
  isReasoning: v.literal(false),
});

export const MessageListSchema = v.object({ messages: v.array(MessageItemSchema) });

export const HistoryPageSchema = v.object({
  messages: v.pipe(v.array(MessageItemSchema), v.description('Oldest first')),
  prevCursor: v.pipe(v.nullable(v.string()), v.description('`before` value for the messages preceding this page')),
  nextCursor: v.pipe(
    v.nullable(v.string()),
    v.description('`after` value for the messages following this page (also on the newest)'),
  ),
  hasOlder: v.boolean(),
  hasNewer: v.boolean(),
});

export const MessageReplySchema = v.object({
  message: v.object({ type: v.literal('ai'), content: v.string(), id: v.string() }),
  sessionId: v.string(),
  messages: v.optional(
    v.pipe(v.array(MessageItemSchema), v.description('With returnAllMessages: the whole transcript')),
  ),
  aborted: v.optional(
    v.pipe(v.literal(true), v.description('The generation was stopped (abort route, newer message)')),
  ),
});

export const SseStreamSchema = v.pipe(
  v.string(),
  v.description(
    'text/event-stream: `reasoning` ack, then `message` / `reasoning` / `tool_call` / `action_call` frames, then ' +
      '`reasoning` (isComplete) or `error`, and `done` always last; `: heartbeat` comments every 15 s.',
  ),
);

export const AbortAnswerSchema = v.object({ success: v.boolean() });
export const DelegationStoredSchema = v.object({ ok: v.literal(true), expiration: v.optional(v.number()) });
export const DelegationStatusSchema = v.object({ authorized: v.boolean(), expiration: v.optional(v.number()) });
export const DelegationRevokedSchema = v.object({ ok: v.literal(true) });

export const RunStatusSchema = v.object({
  run: v.object({
    runId: v.string(),
    status: v.pipe(
      v.picklist(['queued', 'running', 'recovering']),
      v.description(
        "Only runs in progress are answered: `queued` (waits for the session's previous turn), `running`, `recovering` (cluster mode: its node died, another runs the turn again)",
      ),
    ),
  }),
});

export const ModelInfoSchema = v.object({
  id: v.pipe(v.string(), v.description('What `model` of a message names')),
  label: v.string(),
  family: v.string(),
  tier: v.picklist(['everyday', 'balanced', 'top']),
  costLabel: v.string(),
  badge: v.string(),
  blurb: v.string(),
  vision: v.pipe(v.boolean(), v.description('Reads image attachments')),
  pricing: v.object({
    inputPerMillion: v.number(),
    outputPerMillion: v.number(),
    currency: v.literal('USD'),
    unit: v.literal('per_million_tokens'),
  }),
  isDefault: v.boolean(),
});

export const ModelsResponseSchema = v.object({
  models: v.array(ModelInfoSchema),
  default: v.pipe(v.string(), v.description('The id used when a message names no model')),
});
