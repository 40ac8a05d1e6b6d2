// Thread: any (the route reads, the chat actors' tool writes)
// Preferences in the LMDB database
// `oracle-preferences`, keyed `<userDid>|<oracleDid>` (`|` cannot occur in a DID).
import type { Store } from '../../../store/env.js';
import { lmdbRevisionedRecords } from './revisioned-records.js';
import type { PreferencesRepository } from '../../../oracle/plugins/user-preferences/repository.js';
import type { Stored } from '../../../store/revision.js';
import type { UserPreferences } from '../../../oracle/plugins/user-preferences/schema.js';

export function openLmdbPreferences(store: Store): PreferencesRepository {
  return lmdbRevisionedRecords(
    store.db<Stored<UserPreferences>>('oracle-preferences'),
    ({ userDid, oracleDid }) => `${userDid}|${oracleDid}`,
  );
}
