// Thread: any (the credits plugin charges in a turn)
// Credit accounts in the LMDB database `oracle-credits`,
// keyed by the user's DID.
import type { Store } from '../../../store/env.js';
import { lmdbRevisionedRecords } from './revisioned-records.js';
import type { Stored } from '../../../store/revision.js';
import type { CreditAccount, CreditRepository } from '../../../oracle/plugins/credits/repository.js';

export function openLmdbCredits(store: Store): CreditRepository {
  return lmdbRevisionedRecords(store.db<Stored<CreditAccount>>('oracle-credits'), (userDid: string) => userDid);
}
