// Thread: main
// POST /messages/abort, POST /messages/:sessionId (JSON or SSE), GET /messages/:sessionId.
// The abort route is declared first; uWS also prefers a static segment over a parameter.
import { randomUUID } from 'node:crypto';
import { reply, type HttpRequest, type HttpResponse, type Reply } from '../../http/types.js';
import { HostUnavailableError, type ActorRef } from '../../runtime/actor-runtime.js';
import type { AuthIdentity } from '../auth/index.js';
import {
  AbortAnswerSchema,
  ErrorBodySchema,
  MessageListSchema,
  MessageReplySchema,
  PaymentRequiredSchema,
  SseStreamSchema,
} from './answer-schemas.js';
import {
  CHAT_ACTOR,
  type AbortSignalMessage,
  type ChatShape,
  type TurnMessage,
  type TurnReply,
} from '../chat/chat-protocol.js';
import { relayStream, SSE_HEADERS } from './stream-relay.js';
import { streamMessageList } from './message-list-stream.js';
import { oracleErrors } from '../errors.js';
import {
  AbortSchema,
  SendMessageSchema,
  SessionIdParamsSchema,
  TimeZoneSchema,
  type SendMessageInput,
} from './schemas.js';
import * as v from 'valibot';
import { actorCall, actorFailure, AUTH_RESPONSES, route, supersede, type OracleRouteDeps } from './deps.js';

const tags = ['Messages'];
/** A JSON (non-streamed) answer may take this long: several model calls and tools. */
const JSON_TURN_TIMEOUT_MS = 10 * 60_000;

/** `timezone` of the body, else a valid `x-timezone` header. */
function timezoneOf(body: SendMessageInput, req: HttpRequest): string | undefined {
  if (body.timezone) return body.timezone;
  const header = req.headers['x-timezone'];
  return header && v.is(TimeZoneSchema, header) ? header : undefined;
}

export function messageRoutes(deps: OracleRouteDeps) {
  const { actors, reads } = deps;
  return [
    route({
      method: 'POST',
      path: '/messages/abort',
      auth: 'ucan',
      summary: 'Abort the generation in flight of one of your sessions',
      tags,
      body: AbortSchema,
      responses: {
        200: { description: '`success: true` when a generation was found and stopped', schema: AbortAnswerSchema },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: { did }, body: { sessionId }, req }) {
        // The actor stops only its own user's generation; unknown, foreign or idle sessions answer false alike.
        const stop: AbortSignalMessage = { type: 'abort', userDid: did };
        const found = await actors
          .ref(CHAT_ACTOR, sessionId, req.trace)
          .signal(stop)
          .catch((error: unknown) => {
            // A host that is restarting runs no generation.
            if (error instanceof HostUnavailableError) return false;
            throw error;
          });
        return reply.json(200, { success: found === true });
      },
    }),

    route({
      method: 'POST',
      path: '/messages/:sessionId',
      auth: 'ucan',
      summary: 'Send a message; the answer is JSON, or an SSE stream with `stream: true`',
      tags,
      params: SessionIdParamsSchema,
      body: SendMessageSchema,
      responses: {
        200: {
          description: 'The answer (JSON), or with `stream: true` a text/event-stream',
          schema: v.union([MessageReplySchema, SseStreamSchema]),
        },
        402: { description: 'Out of credits (credits plugin)', schema: PaymentRequiredSchema },
        404: { description: 'No such session of this user', schema: ErrorBodySchema },
        413: {
          description:
            "The message would take the session's transcript past CHAT_TRANSCRIPT_MAX_BYTES (`limit`, `used`); nothing stored",
          schema: ErrorBodySchema,
        },
        502: { description: 'The model failed (JSON answers; streams get an `error` frame)', schema: ErrorBodySchema },
        503: {
          description:
            'The session actor is restarting or busy (mailbox or host queue full); retry after `Retry-After`',
          schema: ErrorBodySchema,
        },
        504: {
          description: "The answer was not done by the call's deadline; nothing stored; retry after `Retry-After`",
          schema: ErrorBodySchema,
        },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: user, params: { sessionId }, body, req, res }) {
        if (body.model !== undefined && !deps.models.find(body.model)) {
          throw oracleErrors.badRequest(
            `Unknown model "${body.model}": GET /models lists the models this oracle offers`,
          );
        }
        // Ownership is the actor's check, made before anything starts: an unknown or foreign session is refused
        // before a stream opens, so it is a JSON 404 even when a stream was asked for (no extra round trip).
        const turn: TurnMessage = {
          type: 'turn',
          ...deps.oracle,
          userDid: user.did,
          turnId: randomUUID(),
          at: Date.now(),
          requestId: req.requestId,
          message: body.message,
          model: body.model,
          attachments: body.attachments,
          homeServer: body.homeServer,
          timezone: timezoneOf(body, req),
          tools: body.tools,
          agActions: body.agActions,
          mcpInvocations: body.mcpInvocations,
          returnAllMessages: body.returnAllMessages === true && body.stream !== true,
        };
        // One generation per session: the newest message stops the one in flight and any queued before it.
        const actor = actors.ref(CHAT_ACTOR, sessionId, req.trace);
        supersede(actor, user.did, turn);
        return body.stream
          ? streamTurn(deps, actor, turn, sessionId, res)
          : jsonTurn(actor, sessionId, turn, user, req);
      },
    }),

    route({
      method: 'GET',
      path: '/messages/:sessionId',
      auth: 'ucan',
      summary: 'The messages of a session, oldest first (streamed as it is read)',
      tags,
      params: SessionIdParamsSchema,
      responses: {
        200: {
          description:
            'The whole transcript, written as it is read (chunked); `GET /sessions/:sessionId/messages` reads it in pages',
          schema: MessageListSchema,
        },
        404: {
          description: 'No such session of this user (unknown and foreign ids answer alike)',
          schema: ErrorBodySchema,
        },
        ...AUTH_RESPONSES,
      },
      async handler({ identity: user, params: { sessionId }, req, res }) {
        // Read through the session's actor; unknown and someone else's answer alike, so ids cannot be probed. The
        // first part is read before the answer starts, so that refusal is still a JSON 404.
        const part = (from: number) => actorCall(() => reads.messagesPart(sessionId, user.did, from, req.trace));
        const first = await part(0);
        const writer = res.stream(200, { 'Content-Type': 'application/json; charset=utf-8' });
        await streamMessageList(writer, first, part, deps.log, req.requestId);
      },
    }),
  ];
}

type ChatRef = ActorRef<ChatShape>;

// Both send their message at once, before any await: it must leave in the same event-loop turn as supersede's.
// A stream is a run (runs/run-log.ts): its frames are numbered and kept, the POST's answer is its first reader,
// and a dropped connection only detaches that reader: the turn goes on, re-joinable with GET /runs/:id.
async function streamTurn(
  deps: OracleRouteDeps,
  actor: ChatRef,
  turn: TurnMessage,
  sessionId: string,
  res: HttpResponse,
): Promise<Reply | void> {
  const stream = actor.stream(turn);
  const runId = turn.turnId;
  // Kept from now on, `queued` until the actor takes it (it may wait for the session's previous turn):
  // GET /sessions/:id/run names it, GET /runs/:id follows it.
  const run = deps.runs.start({ runId, sessionId, userDid: turn.userDid, requestId: turn.requestId }, 'queued');
  const outcome = await relayStream(stream.channel, {
    started: () => {
      if (run.status === 'queued') run.status = 'running';
    },
    open: () => {
      run.status = 'running';
      const reader = res.stream(200, { ...SSE_HEADERS, 'X-Run-Id': runId });
      run.attach(reader, run.runFrame(0));
      return run.sink;
    },
    heartbeatMs: deps.heartbeatMs,
    done: stream.done,
    // Cluster mode: the actor keeps the run's frames in the runs stream; the client re-joins it there.
    hostLost: deps.keptRuns && (() => (deps.runs.forget(runId), true)),
  });
  // Refused before it opened (a DomainError), or its host died before a word: the face's mapping answers.
  if (outcome.kind !== 'streaming') {
    deps.runs.forget(runId);
    throw actorFailure(outcome.error);
  }
}

async function jsonTurn(
  actor: ChatRef,
  sessionId: string,
  turn: TurnMessage,
  user: AuthIdentity,
  req: HttpRequest,
): Promise<Reply> {
  const answering = actorCall(() => actor.send(turn, JSON_TURN_TIMEOUT_MS));
  // A client that leaves stops its generation.
  const stop: AbortSignalMessage = { type: 'abort', userDid: user.did, turnId: turn.turnId };
  const onGone = () => void actor.signal(stop).catch(() => undefined);
  req.signal.addEventListener('abort', onGone, { once: true });
  let answer: TurnReply;
  try {
    answer = await answering;
  } finally {
    req.signal.removeEventListener('abort', onGone);
  }
  if (answer.error !== undefined && !answer.aborted) throw oracleErrors.agentFailed(answer.error);
  const body: Record<string, unknown> = { message: answer.message, sessionId };
  if (answer.messages) body.messages = answer.messages;
  if (answer.aborted) body.aborted = true;
  return reply.json(200, body);
}
