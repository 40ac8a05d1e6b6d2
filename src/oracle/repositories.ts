// Thread: any
// The oracle's record families, each behind its repository: the port the face declares. The composition root
// picks the engine (src/app/records.ts: these LMDB ones, or JetStream's in src/cluster/records/oracle/), and the face's
// roots (index.ts on the front door, actor/services.ts in each actor host) get repositories, never the Store.
import type { Store } from '../store/env.js';
import { openLmdbCalls } from './calls/lmdb-repository.js';
import type { CallRepository } from './calls/records.js';
import type { DelegationRepository } from './identity/delegations.js';
import { openLmdbDelegations } from './lmdb-delegations.js';
import { openLmdbRevocations } from './lmdb-revocations.js';
import { openLmdbCredits } from './plugins/credits/lmdb-repository.js';
import type { CreditRepository } from './plugins/credits/repository.js';
import { openLmdbPreferences } from './plugins/user-preferences/lmdb-repository.js';
import type { PreferencesRepository } from './plugins/user-preferences/repository.js';
import type { RevocationRepository } from './identity/revocations.js';
import { openLmdbSessionStores } from './sessions/lmdb-turn-commit.js';
import type { SessionStores } from './sessions/turn-commit.js';
import type { RunKeeping } from './runs/kept-runs.js';
import { openLmdbOpenRuns, type OpenRunRepository } from './runs/open-runs.js';

/** Sessions, transcripts and a turn's commit over both (SessionStores), and the other families. */
export interface OracleRepositories extends SessionStores {
  readonly revocations: RevocationRepository;
  /** The users' delegations to one oracle. */
  delegations(oracleDid: string): DelegationRepository;
  readonly preferences: PreferencesRepository;
  readonly credits: CreditRepository;
  /** Live calls (POST /calls/:id/sync and the routes beside it). */
  readonly calls: CallRepository;
  /** Streamed turns in flight (runs/open-runs.ts). */
  readonly openRuns: OpenRunRepository;
  /** Cluster mode: where runs keep their frames, so that they outlive their node (runs/kept-runs.ts). */
  readonly keptRuns?: RunKeeping;
}

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
