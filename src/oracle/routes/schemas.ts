// Thread: main
// Request schemas of the oracle routes (valibot). The same schemas validate requests and feed the OpenAPI
// document (route docs `body`, `query`, `params`). Issue texts start with the field's path, as the NestJS reference's do.
import * as v from 'valibot';

/** Longest user message accepted (characters); the body limit bounds the request anyway. */
export const MESSAGE_MAX_CHARS = 100_000;
export const ATTACHMENTS_MAX = 10;
/** Declared client tools / actions per message. */
export const CLIENT_TOOLS_MAX = 64;
export const SESSION_PAGE_DEFAULT = 20;
export const SESSION_PAGE_MAX = 100;

// Messages are phrased to follow the field's path: "attachments.0.filename should not be empty".
const text = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.nonEmpty('should not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
  );

/** OpenAI's rule for function names, so a declared tool can be offered to any chat-completions model. */
const toolName = () =>
  v.pipe(
    v.string('must be a string'),
    v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes'),
  );

const jsonObject = () => v.record(v.string(), v.unknown(), 'must be an object');

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const TimeZoneSchema = v.pipe(
  v.string('must be a string'),
  v.maxLength(64, 'must be at most 64 characters'),
  v.check(isTimeZone, 'must be an IANA time zone such as Europe/Paris'),
  v.description("IANA time zone; overrides the user's timezone in the runtime context."),
);

export const BrowserToolSchema = v.object({
  name: toolName(),
  description: v.pipe(v.string('must be a string'), v.maxLength(4000, 'must be at most 4000 characters')),
  schema: v.pipe(jsonObject(), v.description('JSON schema of the arguments object')),
});

export const AgActionSchema = v.object({
  name: toolName(),
  description: v.pipe(v.string('must be a string'), v.maxLength(4000, 'must be at most 4000 characters')),
  schema: v.pipe(jsonObject(), v.description('JSON schema of the arguments object')),
  hasRender: v.optional(v.boolean('must be a boolean')),
});

export const AttachmentSchema = v.pipe(
  v.object({
    mxcUri: v.optional(text(2048)),
    eventId: v.optional(text(512)),
    filename: text(512),
    mimetype: text(255),
    size: v.optional(
      v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(0, 'must be 0 or more')),
    ),
    category: v.optional(text(60)),
  }),
  v.check((a) => a.mxcUri !== undefined || a.eventId !== undefined, 'needs an mxcUri or an eventId'),
);

const BASE64 = /^[A-Za-z0-9+/\-_]+={0,2}$/;

/** `SendMessageDto` of the spec. */
export const SendMessageSchema = v.object(
  {
    message: v.pipe(
      v.string('must be a string'),
      v.nonEmpty('should not be empty'),
      v.maxLength(MESSAGE_MAX_CHARS, `must be at most ${MESSAGE_MAX_CHARS} characters`),
      v.description("The user's text."),
    ),
    stream: v.optional(v.pipe(v.boolean('must be a boolean'), v.description('true: answer as an SSE stream'))),
    returnAllMessages: v.optional(
      v.pipe(v.boolean('must be a boolean'), v.description('Without streaming: also return the whole transcript')),
    ),
    tools: v.optional(
      v.pipe(
        v.array(BrowserToolSchema, 'must be an array'),
        v.maxLength(CLIENT_TOOLS_MAX, `must contain at most ${CLIENT_TOOLS_MAX} elements`),
        v.description('Browser-side tools the agent may call (answered over the event channel)'),
      ),
    ),
    agActions: v.optional(
      v.pipe(
        v.array(AgActionSchema, 'must be an array'),
        v.maxLength(CLIENT_TOOLS_MAX, `must contain at most ${CLIENT_TOOLS_MAX} elements`),
        v.description('Agent-UI actions the agent may call (reported as action_call frames)'),
      ),
    ),
    attachments: v.optional(
      v.pipe(
        v.array(AttachmentSchema, 'must be an array'),
        v.maxLength(ATTACHMENTS_MAX, `must contain at most ${ATTACHMENTS_MAX} elements`),
      ),
    ),
    mcpInvocations: v.optional(
      v.pipe(
        v.record(
          toolName(),
          v.pipe(v.string('must be a string'), v.regex(BASE64, 'must be a base64 CAR invocation')),
          'must be an object',
        ),
        v.description('MCP tool name -> base64 CAR invocation, for protected MCP tools'),
      ),
    ),
    timezone: v.optional(TimeZoneSchema),
    model: v.optional(v.pipe(text(200), v.description('A model id of GET /models; absent: the default'))),
    homeServer: v.optional(text(512)),
    metadata: v.optional(v.pipe(jsonObject(), v.description('Free-form, e.g. editorRoomId, spaceId'))),
  },
  'body must be a JSON object',
);
export type SendMessageInput = v.InferOutput<typeof SendMessageSchema>;

export const AbortSchema = v.object({ sessionId: text(128) }, 'body must be a JSON object');

/** `StoreDelegationDto` of the spec. */
export const StoreDelegationSchema = v.object(
  {
    raw: v.pipe(text(64 * 1024), v.description('Base64-encoded UCAN delegation CAR (user to oracle)')),
    issuer: v.optional(v.pipe(text(512), v.description('DID of the issuer (the user)'))),
    audience: v.optional(v.pipe(text(512), v.description('DID of the audience (this oracle)'))),
    expiration: v.optional(
      v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.description('Unix time in seconds')),
    ),
  },
  'body must be a JSON object',
);

/** A query value: digits only (bad input is a 400, never a silent default). */
const count = () =>
  v.pipe(v.string(), v.regex(/^\d{1,9}$/, 'must be a non-negative whole number'), v.transform(Number));

/** `GET /sessions` query: limit 0 or absent = 20; above 100 = 100. */
export const SessionListQuerySchema = v.object({
  limit: v.optional(
    v.pipe(
      count(),
      v.transform((limit) => (limit === 0 ? SESSION_PAGE_DEFAULT : Math.min(limit, SESSION_PAGE_MAX))),
      v.description(`Page size (default ${SESSION_PAGE_DEFAULT}, 0 = default, capped at ${SESSION_PAGE_MAX})`),
    ),
    '0',
  ),
  offset: v.optional(v.pipe(count(), v.description('Sessions to skip (default 0)')), '0'),
});

/** A history cursor: an entry number as given in `prevCursor` / `nextCursor`. */
const cursor = (description: string) => v.optional(v.pipe(count(), v.description(description)));

/** `GET /sessions/:id/messages` query: limit as for sessions; at most one of `before` and `after`. */
export const HistoryQuerySchema = v.pipe(
  v.object({
    limit: SessionListQuerySchema.entries.limit,
    before: cursor('A `prevCursor`: the messages just before it'),
    after: cursor('A `nextCursor`: the messages from it on'),
  }),
  v.check((query) => query.before === undefined || query.after === undefined, 'before and after cannot be combined'),
);

export const SessionIdParamsSchema = v.object({ sessionId: text(128) });
