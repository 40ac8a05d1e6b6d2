// Both threads: the oracle's record families, each behind its repository, as the composition roots open them
// (index.ts on the front door, actor/services.ts in each actor host). Code past these roots gets repositories,
// never the Store, so cluster mode can hand the same roots JetStream implementations instead.
import type { Store } from '../store/env.js';
import type { DelegationRepository } from './delegations.js';
import { openLmdbDelegations } from './lmdb-delegations.js';
import { openLmdbRevocations } from './lmdb-revocations.js';
import { openLmdbCredits } from './plugins/credits/lmdb-repository.js';
import type { CreditRepository } from './plugins/credits/repository.js';
import { openLmdbPreferences } from './plugins/user-preferences/lmdb-repository.js';
import type { PreferencesRepository } from './plugins/user-preferences/repository.js';
import type { RevocationRepository } from './revocations.js';
import { openLmdbSessionRepository } from './sessions/lmdb-repository.js';
import { openLmdbTranscriptRepository } from './sessions/lmdb-transcript-repository.js';
import type { SessionRepository } from './sessions/repository.js';
import type { TranscriptRepository } from './sessions/transcript-repository.js';

export interface OracleRepositories {
  readonly sessions: SessionRepository;
  readonly transcripts: TranscriptRepository;
  readonly revocations: RevocationRepository;
  /** The users' delegations to one oracle. */
  delegations(oracleDid: string): DelegationRepository;
  readonly preferences: PreferencesRepository;
  readonly credits: CreditRepository;
}

export function openLmdbOracleRepositories(store: Store): OracleRepositories {
  return {
    sessions: openLmdbSessionRepository(store),
    transcripts: openLmdbTranscriptRepository(store),
    revocations: openLmdbRevocations(store),
    delegations: (oracleDid) => openLmdbDelegations(store, oracleDid),
    preferences: openLmdbPreferences(store),
    credits: openLmdbCredits(store),
  };
}
