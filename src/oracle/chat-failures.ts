// Thread: any (pure)
// How a chat call fails, as plain data that crosses threads (a stream's ending), and
// the words each streaming face (SSE frame, WebSocket event) answers it with. The HTTP answers live in errors.ts,
// which is front-door code; actor code reads only this file.
import { DomainError, transientOf } from '../base/errors.js';
import { CHAT_ERROR_CODES, type ChatErrorCode } from './chat/chat-protocol.js';

export const SESSION_NOT_FOUND = 'Session not found';
export const STORAGE_UNAVAILABLE =
  'The chat service cannot store messages right now; nothing was stored, please send it again later';
export const SESSION_CHANGED =
  'The session changed while this message was answered; nothing was stored, please send it again';

/**
 * Every way a chat call can fail, by stable code: the chat actor's refusals (its DomainError codes), a full
 * mailbox or host queue (`actor_busy`), a host restarting or gone (`host_unavailable`), the call's deadline passed
 * before it was answered (`deadline_exceeded`: nothing of it was committed), the session written
 * by another node since its actor read it (`session_changed`, cluster mode: nothing was stored, the actor
 * reloads, the message can be sent again), the disk too full to store it or its commit failed
 * (`storage_unavailable`: nothing was stored), anything else (`internal`).
 */
export const CHAT_FAILURE_CODES = [
  ...CHAT_ERROR_CODES,
  'actor_busy',
  'host_unavailable',
  'deadline_exceeded',
  'session_changed',
  'storage_unavailable',
  'internal',
] as const;
export type ChatFailureCode = (typeof CHAT_FAILURE_CODES)[number];

/** Each failure in one line, for docs/errors.md (`npm run docs:errors`). */
export const CHAT_FAILURE_MEANINGS: { readonly [C in ChatFailureCode]: string } = {
  session_not_found: "No such session, or someone else's (the same answer for both)",
  session_exists: 'A session with this id exists already',
  credits_exhausted: "The user's credits are spent; `details` says how many are left",
  session_limit: 'The user has as many sessions as the server keeps; delete one first',
  transcript_full: "The session's transcript reached its limit; start a new session",
  actor_busy: "The session's mailbox or its actor host's queue is full (backpressure): refused before any work",
  host_unavailable: "The session's actor host is restarting, or the cluster is out of reach",
  deadline_exceeded: "The answer was not done by the call's deadline, wherever it ran: nothing of it was stored",
  session_changed: 'Another node wrote the session since its actor read it (cluster): nothing was stored',
  storage_unavailable: 'The disk is too full or its commit failed: nothing was stored',
  internal: 'Anything else (logged with the request id)',
};

/** A failed chat call as plain data (it crosses threads in a stream's ending). */
export interface ChatFailure {
  code: ChatFailureCode;
  message: string;
  details?: Record<string, unknown>;
  /** actor_busy, deadline_exceeded, storage_unavailable: when to retry. */
  retryAfterSeconds?: number;
}

const isChatErrorCode = (code: string): code is ChatErrorCode => (CHAT_ERROR_CODES as readonly string[]).includes(code);

/**
 * A failure as the chat face answers it, by its kind (errors.ts, failureKind): a terminal DomainError of the chat
 * actor by its code; a transient one by its code (the busy, the lost race and the full disk each have their own
 * answer; every other, a host restarting or the cluster out of reach, is `host_unavailable`); anything else
 * `internal`.
 */
export function failureOf(error: unknown): ChatFailure {
  if (error instanceof DomainError && isChatErrorCode(error.code))
    return { code: error.code, message: error.message, details: error.details };
  const message = error instanceof Error ? error.message : String(error);
  const transient = transientOf(error);
  switch (transient?.code) {
    case undefined:
      return { code: 'internal', message };
    case 'actor_busy':
      return { code: 'actor_busy', message, retryAfterSeconds: transient.retryAfterSeconds };
    case 'deadline_exceeded':
      return { code: 'deadline_exceeded', message, retryAfterSeconds: transient.retryAfterSeconds };
    case 'revision_conflict':
      return { code: 'session_changed', message };
    case 'storage_unavailable':
      return { code: 'storage_unavailable', message, retryAfterSeconds: transient.retryAfterSeconds };
    default:
      return { code: 'host_unavailable', message };
  }
}

export type AnswerTable<T> = { readonly [C in ChatFailureCode]: (failure: ChatFailure) => T };

/**
 * The text of a stream's SSE `error` frame (the stream is open: its status was 200) and the message of a WebSocket
 * `error` event, per failure. A new code fails to compile until every face answers it (HTTP: errors.ts).
 */
export const streamAnswers: { sse: AnswerTable<string>; websocket: AnswerTable<string> } = {
  sse: {
    session_not_found: () => SESSION_NOT_FOUND,
    session_exists: ({ message }) => message,
    credits_exhausted: ({ message }) => message,
    session_limit: ({ message }) => message,
    transcript_full: ({ message }) => message,
    actor_busy: () => 'The chat service is busy; please send your message again in a moment',
    host_unavailable: () => 'The chat service stopped while answering; please send your message again',
    deadline_exceeded: () => 'The answer took longer than the chat service waits; please send your message again',
    session_changed: () => SESSION_CHANGED,
    storage_unavailable: () => STORAGE_UNAVAILABLE,
    internal: () => 'The answer could not be completed; please send your message again',
  },
  websocket: {
    session_not_found: () => SESSION_NOT_FOUND,
    session_exists: ({ message }) => message,
    credits_exhausted: ({ message }) => message,
    session_limit: ({ message }) => message,
    transcript_full: ({ message }) => message,
    actor_busy: () => 'The chat service is busy; try again in a moment',
    host_unavailable: () => 'The chat service is restarting; the result was not delivered',
    deadline_exceeded: () => 'The chat service did not answer in time; the result was not delivered',
    session_changed: () => SESSION_CHANGED,
    storage_unavailable: () => STORAGE_UNAVAILABLE,
    internal: () => 'Internal server error',
  },
};

/** A failure as the message of a WebSocket `error` event (streamAnswers.websocket). */
export function wsErrorText(error: unknown): string {
  const failure = failureOf(error);
  return streamAnswers.websocket[failure.code](failure);
}
