// Thread: any
// The oracle's record families on the node's LMDB, the OracleRepositories the face declares (oracle/repositories.ts).
import type { OracleRepositories } from '../../../oracle/repositories.js';
import { openLmdbOpenRuns } from './open-runs.js';
import type { Store } from '../../../store/env.js';
import { openLmdbCalls } from './calls.js';
import { openLmdbCredits } from './credits.js';
import { openLmdbDelegations } from './delegations.js';
import { openLmdbPreferences } from './preferences.js';
import { openLmdbRevocations } from './revocations.js';
import { openLmdbSessionStores } from './turn-commit.js';

export function openLmdbOracleRepositories(store: Store): OracleRepositories {
  return {
    ...openLmdbSessionStores(store),
    revocations: openLmdbRevocations(store),
    delegations: (oracleDid) => openLmdbDelegations(store, oracleDid),
    preferences: openLmdbPreferences(store),
    credits: openLmdbCredits(store),
    calls: openLmdbCalls(store),
    openRuns: openLmdbOpenRuns(store),
  };
}
