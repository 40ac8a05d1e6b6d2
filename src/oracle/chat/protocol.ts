// Everything that crosses between the oracle's routes (main thread) and a chat session actor (actor host),
// typed in one place: the actor's messages and replies, its signals, and the stream port's messages.
import type { HttpError } from '../../http/errors.js';
import type { AgActionSchema, BrowserToolSchema } from '../schemas.js';
import type * as v from 'valibot';
import type { SessionView } from '../sessions/records.js';
import type { MessageItem } from '../sessions/transcript.js';

export const CHAT_ACTOR = 'oracle-chat';

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
  /** The request's X-Request-Id, echoed in the frames. */
  requestId: string;
  message: string;
  timezone?: string;
  tools?: v.InferOutput<typeof BrowserToolSchema>[];
  agActions?: v.InferOutput<typeof AgActionSchema>[];
  /** The client's own invocations for protected MCP tools, by offered tool name (`<server>__<tool>`). */
  mcpInvocations?: Record<string, string>;
  returnAllMessages?: boolean;
}

export type ChatActorMessage = CreateSessionMessage | DeleteSessionMessage | TurnMessage;

/** A turn or change refused before any work: the answer's status and body (plain data, it crosses threads). */
export interface Refusal {
  ok: false;
  status: number;
  body: unknown;
}

/** An HttpError as a Refusal: comlink would lose its fields across threads, so it travels as plain data. */
export const refusalOf = (error: HttpError): Refusal => ({ ok: false, status: error.status, body: error.body });

export type CreateReply = { ok: true; session: SessionView } | Refusal;
export type DeleteReply = { ok: true } | Refusal;
export type TurnReply =
  | {
      ok: true;
      message: { type: 'ai'; content: string; id: string };
      aborted?: boolean;
      error?: string;
      messages?: MessageItem[];
    }
  | Refusal;

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
}

/** Frames in flight (sent, not yet acknowledged) before the actor waits: the stream's backpressure window. */
export const STREAM_WINDOW = 32;
/** The main thread acknowledges after this many frames reached the socket. */
export const STREAM_ACK_EVERY = 8;

/** Actor -> main over the stream port. */
export type StreamMessage =
  | { type: 'refused'; status: number; body: unknown }
  | { type: 'open' }
  /** One SSE frame, written in one write; `final` on `done`. */
  | { type: 'frame'; text: string; final?: boolean }
  | { type: 'end' };

/** Main -> actor over the stream port. */
export type StreamControl =
  /** Frames written to the socket so far (cumulative). */
  | { type: 'ack'; frames: number }
  /** The client went away: stop generating. */
  | { type: 'cancel' };
