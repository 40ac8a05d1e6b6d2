// Thread: main
// Chat turns that come from another face rather than from a client (a USSD `ask` state,
// docs/ussd-ask.md), run on the session's chat actor as a streamed `POST /messages` runs them: a run (runs/), kept
// on this node with no reader, stored as the session's open run before the agent runs, so in cluster mode a turn
// whose node dies is taken over by the partition's next owner. The caller's turn id is the run's id and its human
// entry's, so its answer is found in the transcript (`find`) by any front door, also after this one died. The
// session is made on the first turn; its id is the other face's (one per account and service).
import { DomainError } from '../../base/errors.js';
import type { Logger } from '../../base/log.js';
import type { Actors } from '../../runtime/router.js';
import { CHAT_ACTOR, type OracleRef, type TurnMessage } from './chat-protocol.js';
import type { ModelCatalogue } from './models.js';
import type { RunRegistry } from '../runs/registry.js';
import { relayStream } from '../routes/stream-relay.js';

export interface HostedTurn {
  userDid: string;
  sessionId: string;
  turnId: string;
  message: string;
  /** A model of the catalogue; its default when absent. */
  model?: string;
}

/** A turn asked before: found by its id in its session. */
export type HostedTurnRef = Pick<HostedTurn, 'userDid' | 'sessionId' | 'turnId'>;

/**
 * The two ways in: `ask` runs a turn, `find` reads the answer of one asked before (waiting for it when it runs). Each
 * answers the text, null when the turn failed (or is not known: cut and not run again), undefined when it could not
 * tell (the actor's node was unreachable): the caller asks again later.
 */
export interface HostedTurns {
  ask(turn: HostedTurn): Promise<string | null | undefined>;
  find(turn: HostedTurnRef): Promise<string | null | undefined>;
}

export interface HostedTurnDeps {
  actors: Actors;
  oracle: OracleRef;
  models: ModelCatalogue;
  runs: RunRegistry;
  heartbeatMs: number;
  /** Cluster mode: the runs stream keeps the run's frames, another node takes the turn over. */
  cluster: boolean;
  log: Logger;
}

/** A turn may take as long as a JSON turn of the REST face. */
const TURN_TIMEOUT_MS = 10 * 60_000;
const CREATE_TIMEOUT_MS = 15_000;

export function hostedTurns(deps: HostedTurnDeps): HostedTurns {
  const find = async (turn: HostedTurnRef): Promise<string | null | undefined> => {
    try {
      const { userDid, turnId } = turn;
      const reply = await deps.actors
        .ref(CHAT_ACTOR, turn.sessionId)
        .send({ type: 'turn-answer', userDid, turnId }, TURN_TIMEOUT_MS);
      return reply.answer;
    } catch (err) {
      deps.log.warn({ err, sessionId: turn.sessionId }, 'a hosted chat turn was not found');
      return undefined;
    }
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
  const ask = async (turn: HostedTurn): Promise<string | null | undefined> => {
    if (turn.model !== undefined && !deps.models.find(turn.model)) {
      deps.log.warn({ model: turn.model }, 'a hosted chat turn names a model not in the catalogue');
      return null;
    }
    try {
      let outcome = await streamed(deps, turn);
      if (outcome === 'session_not_found') {
        await create(turn);
        outcome = await streamed(deps, turn);
      }
      return outcome === 'ended' ? find(turn) : null;
    } catch (err) {
      deps.log.warn({ err, sessionId: turn.sessionId }, 'a hosted chat turn failed');
      return null;
    }
  };
  return { ask, find };
}

/** Runs the turn as a run with no reader: `ended` once its stream ended, else the refusal's code. */
async function streamed(deps: HostedTurnDeps, turn: HostedTurn): Promise<string> {
  const { turnId: runId, userDid, sessionId } = turn;
  const message: TurnMessage = {
    type: 'turn',
    ...deps.oracle,
    userDid,
    turnId: runId,
    humanId: runId,
    at: Date.now(),
    requestId: runId,
    message: turn.message,
    ...(turn.model === undefined ? {} : { model: turn.model }),
  };
  const stream = deps.actors.ref(CHAT_ACTOR, sessionId).stream(message, TURN_TIMEOUT_MS);
  const run = deps.runs.start({ runId, sessionId, userDid, requestId: runId }, 'queued');
  const outcome = await relayStream(stream.channel, {
    started: () => {
      if (run.status === 'queued') run.status = 'running';
    },
    open: () => {
      run.status = 'running';
      return run.sink;
    },
    heartbeatMs: deps.heartbeatMs,
    done: stream.done,
    // Cluster mode: the actor's node died mid-turn; the partition's next owner takes it over (`find` waits for it).
    hostLost: deps.cluster ? () => (deps.runs.forget(runId), true) : undefined,
  });
  if (outcome.kind === 'streaming') {
    await outcome.finished;
    return 'ended';
  }
  deps.runs.forget(runId);
  if (outcome.kind === 'refused') return outcome.error instanceof DomainError ? outcome.error.code : 'refused';
  // Its host died before a word: in cluster mode the turn may be taken over still.
  if (deps.cluster) return 'ended';
  throw outcome.error;
}
