// Every error answer of the oracle face in one place: stable messages in the NestJS shape
// `{ statusCode, message, error }` that the client SDK parses (oracle-wire-format.md, General).
import * as v from 'valibot';
import { HttpError } from '../http/errors.js';
import type { InputProblem } from '../http/route.js';
import { ActorBusyError, DomainError, HostUnavailableError } from '../runtime/errors.js';
import type { ChatErrorCode } from './chat/protocol.js';

export const SESSION_NOT_FOUND = 'Session not found';

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
  chatUnavailable: () => HttpError.of(503, 'The chat service is restarting; try again in a moment', undefined, { 'Retry-After': '1' }),
  /** The session's mailbox or its actor host's queue is full (backpressure): refused before any work. */
  chatBusy: (retryAfterSeconds: number) =>
    HttpError.of(503, 'The chat service is busy; try again in a moment', undefined, { 'Retry-After': String(retryAfterSeconds) }),
  /** The agent failed on a non-streamed message (the stream reports it as an `error` frame instead). */
  agentFailed: (message: string) => HttpError.of(502, message),
};

/**
 * The oracle face's one mapping from a failed chat-actor call to its HTTP answer: the actor's refusals by
 * code, a full mailbox or host queue and a restarting host as 503s; anything else is left to the router (500).
 */
export function chatFailure(error: unknown): unknown {
  if (error instanceof DomainError) {
    const code = error.code as ChatErrorCode;
    switch (code) {
      case 'session_not_found':
        return oracleErrors.sessionNotFound();
      case 'session_exists':
        return HttpError.of(409, error.message);
      case 'credits_exhausted':
        return HttpError.of(402, error.message, error.details);
    }
  }
  if (error instanceof ActorBusyError) return oracleErrors.chatBusy(error.retryAfterSeconds);
  return error instanceof HostUnavailableError ? oracleErrors.chatUnavailable() : error;
}

/** Schema messages follow the field's path ("attachments.0.filename should not be empty"); root ones stand alone. */
function issueText(issue: v.BaseIssue<unknown>): string {
  const path = v.getDotPath(issue);
  if (!path) return issue.message;
  // valibot reports a missing key as an issue of the object (expected '"key"'), with the object's message.
  if (issue.type === 'object' && issue.input === undefined && issue.expected?.startsWith('"')) return `${path} is required`;
  return `${path} ${issue.message}`;
}

/** The 400 of the wire format for input a declared route refused (see http/route.ts). */
export function refuseInput(problem: InputProblem): never {
  throw problem.bodyError === undefined ? oracleErrors.validation(problem.issues) : oracleErrors.malformedBody(problem.bodyError);
}

/** Validates `input` with `schema` or throws the 400 of the wire format. */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown, bodyError?: string): v.InferOutput<S> {
  if (bodyError) throw oracleErrors.malformedBody(bodyError);
  const result = v.safeParse(schema, input);
  if (!result.success) throw oracleErrors.validation(result.issues);
  return result.output;
}
