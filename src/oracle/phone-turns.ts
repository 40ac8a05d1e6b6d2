// Thread: main
// Chat turns that come from another face rather than from a client (a USSD `ask` state,
// docs/ussd-ask.md), run on the session's chat actor exactly as a JSON `POST /messages` runs them, under the DID
// the other face vouches for (a USSD account's did:key). The session is made on the first turn; its id is the
// other face's (one per account and service). The answer's text, or null when the turn failed.
import { DomainError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Actors } from '../runtime/router.js';
import { CHAT_ACTOR, type OracleRef, type TurnMessage, type TurnReply } from './chat-protocol.js';
import type { ModelCatalogue } from './models.js';

export interface HostedTurn {
  userDid: string;
  sessionId: string;
  turnId: string;
  message: string;
  /** A model of the catalogue; its default when absent. */
  model?: string;
}

/** A turn may take as long as a JSON turn of the REST face. */
const TURN_TIMEOUT_MS = 10 * 60_000;
const CREATE_TIMEOUT_MS = 15_000;

export function hostedTurns(deps: { actors: Actors; oracle: OracleRef; models: ModelCatalogue; log: Logger }) {
  const send = (turn: HostedTurn): Promise<TurnReply> => {
    const message: TurnMessage = {
      type: 'turn',
      ...deps.oracle,
      userDid: turn.userDid,
      turnId: turn.turnId,
      at: Date.now(),
      requestId: turn.turnId,
      message: turn.message,
      ...(turn.model === undefined ? {} : { model: turn.model }),
    };
    return deps.actors.ref(CHAT_ACTOR, turn.sessionId).send(message, TURN_TIMEOUT_MS);
  };
  const create = async (turn: HostedTurn): Promise<void> => {
    try {
      await deps.actors
        .ref(CHAT_ACTOR, turn.sessionId)
        .send({ type: 'create', ...deps.oracle, userDid: turn.userDid }, CREATE_TIMEOUT_MS);
    } catch (error) {
      // Another turn of the same user made it first.
      if (!(error instanceof DomainError && error.code === 'session_exists')) throw error;
    }
  };
  return async (turn: HostedTurn): Promise<string | null> => {
    if (turn.model !== undefined && !deps.models.find(turn.model)) {
      deps.log.warn({ model: turn.model }, 'a hosted chat turn names a model not in the catalogue');
      return null;
    }
    try {
      let reply: TurnReply;
      try {
        reply = await send(turn);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'session_not_found')) throw error;
        await create(turn);
        reply = await send(turn);
      }
      if (reply.error !== undefined || reply.aborted) return null;
      return reply.message.content === '' ? null : reply.message.content;
    } catch (err) {
      deps.log.warn({ err, sessionId: turn.sessionId }, 'a hosted chat turn failed');
      return null;
    }
  };
}
