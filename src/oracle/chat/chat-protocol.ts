// Thread: any (shared, pure: no state of its own)
// Everything that crosses between the oracle's routes (main thread) and a chat session actor (actor host),
// typed in one place: the actor's protocol (messages and replies, signals), its refusals (ChatErrorCode,
// thrown as DomainError and mapped to answers by errors.ts), and the stream port's messages.
import { DomainError } from '../../runtime/errors.js';
import type { WireError } from '../../runtime/wire-errors.js';
import { declareProtocol, type Call, type ShapeOf } from '../../runtime/protocol.js';
import type { ChannelSignal } from './channel-protocol.js';
import type { AgActionSchema, BrowserToolSchema } from '../routes/schemas.js';
import type * as v from 'valibot';
import type { SessionView } from '../sessions/records.js';
import type { HistoryPage, MessageItem, MessagesPart } from '../sessions/transcript.js';
import type { FrameBatch } from '../frame-batch.js';
import type { StreamEnding } from '../stream-ending.js';
import type { Attachment } from './attachments.js';

/** Who the oracle is; the actor hosts start before the face loads its identity, so messages carry it. */
export interface OracleRef {
  oracleDid: string;
  oracleName: string;
}

export interface CreateSessionMessage extends OracleRef {
  type: 'create';
  userDid: string;
}

export interface DeleteSessionMessage {
  type: 'delete';
  userDid: string;
}

export interface TurnMessage extends OracleRef {
  type: 'turn';
  userDid: string;
  /** Unique per turn (the request id a client sends may repeat). */
  turnId: string;
  /**
   * When the front door took the message (ms since the epoch), the same as its supersede signal's `at`: orders the
   * turn against announcements that reach the actor late or out of order (a signal retried after a failover).
   */
  at?: number;
  /** The request's X-Request-Id, echoed in the frames. */
  requestId: string;
  message: string;
  /** The user's attachments and homeserver (`attachments`, `homeServer` of the body). */
  attachments?: Attachment[];
  homeServer?: string;
  /** The catalogue model to answer with (models.ts); absent: the default. */
  model?: string;
  timezone?: string;
  tools?: v.InferOutput<typeof BrowserToolSchema>[];
  agActions?: v.InferOutput<typeof AgActionSchema>[];
  /** The client's own invocations for protected MCP tools, by offered tool name (`<server>__<tool>`). */
  mcpInvocations?: Record<string, string>;
  returnAllMessages?: boolean;
  /** The id its human entry gets; absent: a new one. A hosted turn names it so its answer is found by it. */
  humanId?: string;
}

/**
 * Reads of the session's own state, answered by its actor (routes/session-reads.ts sends them): `owns`,
 * whether the session exists and is the user's; `messages`, one part of its transcript as JSON (refused
 * `session_not_found` unless it is the user's). Each is declared both as a signal, which an actor in memory
 * answers at once, even while a turn runs (`undefined` when it is not in memory or has not loaded its record),
 * and as a call, which wakes the actor and loads it.
 */
export interface OwnsSessionMessage {
  type: 'owns';
  userDid: string;
}

export interface MessagesPageMessage {
  type: 'messages';
  userDid: string;
  /** The entry number to start at (0: the oldest). */
  from: number;
}

/**
 * One page of the transcript for `GET /sessions/:id/messages`: the newest `limit` messages, or those just
 * before entry `before`, or those from entry `after` on (cursors are entry numbers).
 */
export interface HistoryPageMessage {
  type: 'history';
  userDid: string;
  limit: number;
  before?: number;
  after?: number;
}

export type SessionReadMessage = OwnsSessionMessage | MessagesPageMessage | HistoryPageMessage;

const SESSION_READS = new Set<unknown>(['owns', 'messages', 'history']);
export const isSessionRead = (message: { type?: unknown }): message is SessionReadMessage =>
  SESSION_READS.has(message.type);

/**
 * Cluster mode, a run kept in the runs stream gone quiet (runs/kept-runs.ts): `run-alive` (a signal) asks whether
 * the session's actor runs it now; when it does not, `recover` (a call, in the mailbox) has the partition's owner
 * take the turn over from its open run (runs/open-runs.ts), or close it `interrupted` when it cannot be run again.
 */
export interface RunAliveMessage {
  type: 'run-alive';
  userDid: string;
  runId: string;
}
export interface RecoverRunMessage {
  type: 'recover';
  userDid: string;
  runId: string;
}
export interface RecoverReply {
  /** `recovered`: run again to its end; `interrupted`: closed so; `none`: nothing of it to take over. */
  outcome: 'recovered' | 'interrupted' | 'none';
}

/**
 * The stored answer of the turn whose human entry is `turnId` (a hosted turn: phone-turns.ts), read in the mailbox,
 * so after the turn in flight; in cluster mode a turn whose node died is first taken over (its open run). `found`
 * false: the session holds no such turn among its recent ones (cut and not run again, or never run).
 */
export interface TurnAnswerMessage {
  type: 'turn-answer';
  userDid: string;
  turnId: string;
}
export interface TurnAnswerReply {
  found: boolean;
  /** The answer's text; null when the turn failed, was stopped or answered nothing. */
  answer: string | null;
}

export type ChatActorMessage =
  | CreateSessionMessage
  | TurnAnswerMessage
  | DeleteSessionMessage
  | TurnMessage
  | SessionReadMessage
  | RecoverRunMessage;

/**
 * Why a chat actor refuses a message before any work (the `code` of its DomainError):
 * `session_not_found` (unknown or someone else's), `session_exists` (create on a taken id),
 * `credits_exhausted` (details: claims, outstandingClaims), `session_limit` (the user holds as many sessions as
 * allowed; details: limit), `transcript_full` (the message, or its answer, would take the transcript past its
 * bytes; details: limit, used; nothing of the turn is stored).
 */
export const CHAT_ERROR_CODES = [
  'session_not_found',
  'session_exists',
  'credits_exhausted',
  'session_limit',
  'transcript_full',
] as const;
export type ChatErrorCode = (typeof CHAT_ERROR_CODES)[number];

export const chatRefusal = (code: ChatErrorCode, message: string, details?: Record<string, unknown>) =>
  new DomainError(code, message, details);

export interface CreateReply {
  session: SessionView;
}
export interface DeleteReply {
  deleted: true;
}
export interface TurnReply {
  message: { type: 'ai'; content: string; id: string };
  aborted?: boolean;
  error?: string;
  messages?: MessageItem[];
}

/**
 * Signals bypass the mailbox, so they reach an actor busy with a generation. `abort` stops the generation
 * in flight when it is the user's (and, with `turnId`, only that turn); `supersededBy` also marks every
 * turn queued before that one as stale, so only the newest message of a burst runs.
 */
export interface AbortSignalMessage {
  type: 'abort';
  userDid: string;
  turnId?: string;
  supersededBy?: string;
  /** When the announced turn was taken (its TurnMessage's `at`): an older announcement than one seen is ignored. */
  at?: number;
}

/** The chat actor's protocol (runtime/protocol.ts); every signal answers whether it reached what it was for. */
export const CHAT_ACTOR = declareProtocol<{
  calls:
    | Call<CreateSessionMessage, CreateReply>
    | Call<DeleteSessionMessage, DeleteReply>
    | Call<TurnMessage, TurnReply>
    | Call<OwnsSessionMessage, boolean>
    | Call<MessagesPageMessage, MessagesPart>
    | Call<HistoryPageMessage, HistoryPage>
    | Call<RecoverRunMessage, RecoverReply>
    | Call<TurnAnswerMessage, TurnAnswerReply>;
  signals:
    | Call<AbortSignalMessage, boolean>
    | Call<ChannelSignal, boolean>
    | Call<RunAliveMessage, boolean>
    | Call<OwnsSessionMessage, Promise<boolean | undefined>>
    | Call<MessagesPageMessage, Promise<MessagesPart | undefined>>
    | Call<HistoryPageMessage, Promise<HistoryPage | undefined>>;
  stream: TurnMessage;
}>('oracle-chat');

export type ChatShape = ShapeOf<typeof CHAT_ACTOR>;

/** Frames in flight (sent, not yet acknowledged) before the actor waits: the stream's backpressure window. */
export const STREAM_WINDOW = 32;
/** The main thread acknowledges after this many frames reached the socket. */
export const STREAM_ACK_EVERY = 8;

/** Actor -> main over the stream port. */
export type StreamMessage =
  /** Refused before it opened (terminal or transient): the error as the one codec has it (wire-errors.ts). */
  | { type: 'refused'; error: WireError }
  /** The actor took the turn (it no longer waits for the session's previous one): the run is no longer `queued`. */
  | { type: 'started' }
  | { type: 'open' }
  /** Frames (those the actor produced within about a millisecond, frame-batch.ts), written in one write. */
  | { type: 'frames'; batch: FrameBatch }
  /**
   * Last message: the ending the actor reports, and an opened stream's closing frames built from it
   * (stream-ending.ts), numbered on from the last frames, with the status its `done` says; a stream that never
   * opened has none.
   */
  | { type: 'end'; ending?: StreamEnding; closing?: FrameBatch };

/** Main -> actor over the stream port. */
export type StreamControl =
  /** Frames written to the socket so far (cumulative). */
  | { type: 'ack'; frames: number }
  /** The client went away: stop generating. */
  | { type: 'cancel' };
