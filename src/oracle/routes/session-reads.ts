// Thread: main
// Reads of one chat session's own state (is it this user's? its transcript) go to the session's
// actor, which owns the record and the transcript, never to the store directly: the actor is the one writer
// and holds the session's current state (in cluster mode it may live on another node, and only it knows
// whether it still owns the session). A read is first a signal, which an actor in memory answers at once,
// even while its mailbox runs a turn (a GET /messages must not wait for a generation to finish); an actor
// not in memory runs nothing, so the read is then a call, which loads it (one in memory that has not loaded
// its record yet answers the call after the message it is loading for).
import type { Actors } from '../../runtime/router.js';
import type { Context } from '../../telemetry/index.js';
import {
  CHAT_ACTOR,
  type HistoryPageMessage,
  type MessagesPageMessage,
  type OwnsSessionMessage,
} from '../chat/chat-protocol.js';
import type { HistoryPage, MessagesPart } from '../sessions/transcript.js';

export interface SessionReads {
  /** Whether the session exists and belongs to `userDid` (unknown and someone else's alike). */
  owns(sessionId: string, userDid: string, trace?: Context): Promise<boolean>;
  /**
   * One part of the transcript as JSON from entry `from` on (GET /messages streams them); refused
   * `session_not_found` unless it is the user's.
   */
  messagesPart(sessionId: string, userDid: string, from: number, trace?: Context): Promise<MessagesPart>;
  /** One page of the transcript (GET /sessions/:id/messages); refused `session_not_found` unless it is the user's. */
  history(
    sessionId: string,
    userDid: string,
    query: Omit<HistoryPageMessage, 'type' | 'userDid'>,
    trace?: Context,
  ): Promise<HistoryPage>;
}

export function sessionReadsThrough(actors: Actors): SessionReads {
  return {
    async owns(sessionId, userDid, trace) {
      const actor = actors.ref(CHAT_ACTOR, sessionId, trace);
      const message: OwnsSessionMessage = { type: 'owns', userDid };
      return (await actor.signal(message)) ?? actor.send(message);
    },
    async messagesPart(sessionId, userDid, from, trace) {
      const actor = actors.ref(CHAT_ACTOR, sessionId, trace);
      const message: MessagesPageMessage = { type: 'messages', userDid, from };
      return (await actor.signal(message)) ?? actor.send(message);
    },
    async history(sessionId, userDid, query, trace) {
      const actor = actors.ref(CHAT_ACTOR, sessionId, trace);
      const message: HistoryPageMessage = { type: 'history', userDid, ...query };
      return (await actor.signal(message)) ?? actor.send(message);
    },
  };
}
