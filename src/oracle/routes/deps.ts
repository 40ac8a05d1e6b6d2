// What the oracle's route modules share.
import type { Logger } from '../../log.js';
import { HostUnavailableError, type ActorRuntime } from '../../runtime/actor-runtime.js';
import type { UcanAuthenticator } from '../auth/index.js';
import type { OracleRef } from '../chat/protocol.js';
import type { DelegationStore } from '../delegations.js';
import { oracleErrors } from '../errors.js';
import type { OracleRouteAuth } from '../route-auth.js';
import type { SessionDb } from '../sessions/records.js';
import type { TranscriptDb } from '../sessions/transcript.js';
import { ErrorBodySchema } from '../answer-schemas.js';

export interface OracleRouteDeps {
  readonly runtime: ActorRuntime;
  readonly auth: OracleRouteAuth;
  readonly authenticator: UcanAuthenticator;
  readonly oracle: OracleRef;
  readonly sessions: SessionDb;
  readonly transcripts: TranscriptDb;
  readonly delegations: DelegationStore;
  readonly heartbeatMs: number;
  readonly log: Logger;
}

/** A call to a chat actor; a host that is restarting answers 503 instead of 500. */
export async function actorCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof HostUnavailableError) throw oracleErrors.chatUnavailable();
    throw error;
  }
}

/** Answers every protected route may give besides its own. */
export const AUTH_RESPONSES = {
  400: { description: 'Invalid input: `message` lists the problems', schema: ErrorBodySchema },
  401: { description: 'Missing or invalid UCAN (`Missing UCAN authentication…` or `Invalid UCAN invocation`, with `reason`)', schema: ErrorBodySchema },
};
