// Thread: main
// Every error answer of the oracle face in one place: stable messages in the NestJS shape
// `{ statusCode, message, error }` that the client SDK parses (oracle-wire-format.md, General).
import * as v from 'valibot';
import { HttpError, httpErrors } from '../http/errors.js';
import type { InputProblem } from '../http/route.js';
import {
  type AnswerTable,
  failureOf,
  SESSION_CHANGED,
  SESSION_NOT_FOUND,
  STORAGE_UNAVAILABLE,
  streamAnswers,
} from './chat-failures.js';

export {
  CHAT_FAILURE_CODES,
  type ChatFailure,
  type ChatFailureCode,
  failureOf,
  SESSION_NOT_FOUND,
  wsErrorText,
} from './chat-failures.js';

export const oracleErrors = {
  /** Unknown session, or someone else's: the same answer, so ids of other users' sessions reveal nothing more. */
  sessionNotFound: () => HttpError.of(404, SESSION_NOT_FOUND),
  /** The valibot issues as the message array of a 400. */
  validation: (issues: readonly v.BaseIssue<unknown>[]) => HttpError.of(400, issues.map(issueText)),
  badRequest: (message: string) => HttpError.of(400, message),
  /** A body that is not JSON at all. */
  malformedBody: (problem: string) => HttpError.of(400, [problem]),
  /** The delegation given to POST /delegation was refused; `reason` says why. */
  delegationRefused: (reason: string) => HttpError.of(400, `Invalid delegation: ${reason}`, { reason }),
  /** The session's actor host is restarting: the client may retry at once. */
  chatUnavailable: () =>
    HttpError.of(503, 'The chat service is restarting; try again in a moment', undefined, { 'Retry-After': '1' }),
  /** The call's deadline passed before the session's actor answered (nothing of it was stored): 504, retry later. */
  chatTimedOut: (retryAfterSeconds: number) =>
    HttpError.of(504, 'The chat service did not answer in time; try again in a moment', undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),
  /** The session's mailbox or its actor host's queue is full (backpressure): refused before any work. */
  chatBusy: (retryAfterSeconds: number) =>
    HttpError.of(503, 'The chat service is busy; try again in a moment', undefined, {
      'Retry-After': String(retryAfterSeconds),
    }),
  /** The agent failed on a non-streamed message (the stream reports it as an `error` frame instead). */
  agentFailed: (message: string) => HttpError.of(502, message),
  /** GET /runs/:runId of a run this node does not hold (never was, or no longer kept). */
  runNotFound: () => HttpError.of(404, 'Run not found'),
  /** GET /sessions/:sessionId/run with no turn being answered. */
  noRunInProgress: () => HttpError.of(404, 'No run in progress'),
};

/** Each of oracleErrors in one line, for docs/errors.md (`npm run docs:errors`). */
export const ORACLE_ERROR_MEANINGS: { readonly [K in keyof typeof oracleErrors]: string } = {
  sessionNotFound: "Unknown session, or someone else's",
  validation: "The body, query or path does not match the route's schema: one message per problem",
  badRequest: 'A request the route refuses for a reason it names',
  malformedBody: 'The body is not JSON',
  delegationRefused: 'The delegation given to POST /delegation was refused; `reason` says why',
  chatUnavailable: "The session's actor host is restarting",
  chatTimedOut: "The call's deadline passed before the session's actor answered; nothing was stored",
  chatBusy: "The session's mailbox or its actor host's queue is full",
  agentFailed: 'The agent failed on a message that was not streamed',
  runNotFound: 'No such run on this node: never started, or no longer kept',
  noRunInProgress: 'The session has no turn being answered',
};

/**
 * The oracle's answer to each failure on each of its wire faces, declared once: the HTTP error (status and
 * body of the wire format) here, the SSE and WebSocket texts in chat-failures.ts. A new code fails to compile
 * until every face answers it.
 */
export const chatAnswers: { http: AnswerTable<HttpError>; sse: AnswerTable<string>; websocket: AnswerTable<string> } = {
  http: {
    session_not_found: () => oracleErrors.sessionNotFound(),
    session_exists: ({ message }) => HttpError.of(409, message),
    credits_exhausted: ({ message, details }) => HttpError.of(402, message, details),
    session_limit: ({ message, details }) => HttpError.of(409, message, details),
    transcript_full: ({ message, details }) => HttpError.of(413, message, details),
    actor_busy: ({ retryAfterSeconds = 1 }) => oracleErrors.chatBusy(retryAfterSeconds),
    host_unavailable: () => oracleErrors.chatUnavailable(),
    deadline_exceeded: ({ retryAfterSeconds = 1 }) => oracleErrors.chatTimedOut(retryAfterSeconds),
    session_changed: () => HttpError.of(409, SESSION_CHANGED),
    storage_unavailable: ({ retryAfterSeconds = 5 }) =>
      HttpError.of(503, STORAGE_UNAVAILABLE, undefined, { 'Retry-After': String(retryAfterSeconds) }),
    internal: () => httpErrors.internal(),
  },
  ...streamAnswers,
};

/**
 * A failed chat-actor call as its HTTP answer (chatAnswers.http). An `internal` failure is handed back as it
 * is: the router logs it and answers the same 500.
 */
export function chatFailure(error: unknown): unknown {
  const failure = failureOf(error);
  return failure.code === 'internal' ? error : chatAnswers.http[failure.code](failure);
}

/** Schema messages follow the field's path ("attachments.0.filename should not be empty"); root ones stand alone. */
function issueText(issue: v.BaseIssue<unknown>): string {
  const path = v.getDotPath(issue);
  if (!path) return issue.message;
  // valibot reports a missing key as an issue of the object (expected '"key"'), with the object's message.
  if (issue.type === 'object' && issue.input === undefined && issue.expected?.startsWith('"'))
    return `${path} is required`;
  return `${path} ${issue.message}`;
}

/** The 400 of the wire format for input a declared route refused (see http/route.ts). */
export function refuseInput(problem: InputProblem): never {
  throw problem.bodyError === undefined
    ? oracleErrors.validation(problem.issues)
    : oracleErrors.malformedBody(problem.bodyError);
}

/** Validates `input` with `schema` or throws the 400 of the wire format. */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown, bodyError?: string): v.InferOutput<S> {
  if (bodyError) throw oracleErrors.malformedBody(bodyError);
  const result = v.safeParse(schema, input);
  if (!result.success) throw oracleErrors.validation(result.issues);
  return result.output;
}
