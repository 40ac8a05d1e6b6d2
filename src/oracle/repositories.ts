// Thread: any
// The oracle's record families, each behind its repository: the port the face declares. The composition root
// picks the engine (src/app/records.ts: LMDB's in src/records/lmdb/oracle/, or JetStream's in src/cluster/records/oracle/,
// both held to the contract suites in test/contracts/), and the face's roots (index.ts on the front door,
// actor/services.ts in each actor host) get repositories, never the Store.
import type { CallRepository } from './calls/records.js';
import type { DelegationRepository } from './identity/delegations.js';
import type { CreditRepository } from './plugins/credits/repository.js';
import type { PreferencesRepository } from './plugins/user-preferences/repository.js';
import type { RevocationRepository } from './identity/revocations.js';
import type { SessionStores } from './sessions/turn-commit.js';
import type { RunKeeping } from './runs/kept-runs.js';
import type { OpenRunRepository } from './runs/open-runs.js';

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
