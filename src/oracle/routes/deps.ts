// Thread: main
// What the oracle's route modules share.
import type { Logger } from '../../base/log.js';
import { declarer } from '../../http/route.js';
import type { ActorRef, Actors } from '../../runtime/router.js';
import type { AuthIdentity, UcanAuthenticator } from '../auth/index.js';
import type { ChatShape, OracleRef, TurnMessage } from '../chat/chat-protocol.js';
import type { DelegationRepository } from '../identity/delegations.js';
import type { RevocationRepository } from '../identity/revocations.js';
import { chatFailure } from '../errors.js';
import type { SessionRepository } from '../sessions/repository.js';
import type { SessionReads } from './session-reads.js';
import type { ModelCatalogue } from '../chat/models.js';
import type { RunRegistry } from '../runs/registry.js';
import type { KeptRuns } from '../runs/kept-runs.js';
import { ErrorBodySchema } from './answer-schemas.js';

export interface OracleRouteDeps {
  readonly actors: Actors;
  readonly authenticator: UcanAuthenticator;
  readonly oracle: OracleRef;
  /** For the per-user lists only (GET /sessions); one session's own state is read through its actor (`reads`). */
  readonly sessions: SessionRepository;
  readonly reads: SessionReads;
  readonly delegations: DelegationRepository;
  readonly revocations: RevocationRepository;
  readonly heartbeatMs: number;
  /** This node's streamed turns, re-joinable (runs/registry.ts). */
  readonly runs: RunRegistry;
  /** Cluster mode: runs kept where every node reads them, re-joined through any node (runs/kept-runs.ts). */
  readonly keptRuns?: KeptRuns;
  /** The models a message may name (models.ts). */
  readonly models: ModelCatalogue;
  readonly log: Logger;
}

export { chatFailure as actorFailure } from '../errors.js';

/** A call to a chat actor, its failure mapped by chatFailure (../errors.ts). */
export async function actorCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw chatFailure(error);
  }
}

/**
 * Stops the session's generation in flight and marks every turn queued before `turnId` stale, without waiting
 * for the answer: the caller sends its own message to the same actor in the same event-loop turn, so the two
 * cross to the host in one batch (runtime/batching-endpoint.ts) and arrive in order, the signal first. A new
 * turn costs one round trip, not two. A host that cannot take the signal cannot take the message either; the
 * message's failure is the answer.
 */
export function supersede(actor: ActorRef<ChatShape>, userDid: string, turn: Pick<TurnMessage, 'turnId' | 'at'>): void {
  actor.signal({ type: 'abort', userDid, supersededBy: turn.turnId, at: turn.at }).catch(() => undefined);
}

/** Declares an oracle route: its handler gets the authenticated user as `identity`. */
export const route = declarer<AuthIdentity>();

/** Answers every protected route may give besides its own. */
export const AUTH_RESPONSES = {
  400: { description: 'Invalid input: `message` lists the problems', schema: ErrorBodySchema },
  401: {
    description:
      'Missing or invalid UCAN (`Missing UCAN authentication…`, `Invalid UCAN invocation` or, for a delegation alone, `Invalid UCAN delegation`, with `reason`)',
    schema: ErrorBodySchema,
  },
};
