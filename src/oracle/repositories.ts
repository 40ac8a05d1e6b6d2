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
import { openLmdbSessionStores } from './sessions/lmdb-turn-commit.js';
import type { SessionStores } from './sessions/turn-commit.js';

/** Sessions, transcripts and a turn's commit over both (SessionStores), and the other families. */
export interface OracleRepositories extends SessionStores {
  readonly revocations: RevocationRepository;
  /** The users' delegations to one oracle. */
  delegations(oracleDid: string): DelegationRepository;
  readonly preferences: PreferencesRepository;
  readonly credits: CreditRepository;
}

export function openLmdbOracleRepositories(store: Store): OracleRepositories {
  return {
    ...openLmdbSessionStores(store),
    revocations: openLmdbRevocations(store),
    delegations: (oracleDid) => openLmdbDelegations(store, oracleDid),
    preferences: openLmdbPreferences(store),
    credits: openLmdbCredits(store),
  };
}
