// Preferences per (user DID, oracle DID) in the LMDB database `oracle-preferences`.
import type { Store } from '../../../store/env.js';
import { mergePreferences, type PreferencesUpdate, type UserPreferences } from './schema.js';

export interface PreferencesStore {
  get(userDid: string, oracleDid: string): UserPreferences | null;
  /** Merges `update` into the stored record (one LMDB transaction, committed before it resolves). */
  merge(userDid: string, oracleDid: string, update: PreferencesUpdate): Promise<UserPreferences>;
}

/** `|` cannot occur in a DID, so the key is unambiguous. */
function keyOf(userDid: string, oracleDid: string): string {
  return `${userDid}|${oracleDid}`;
}

export function openPreferencesStore(store: Store): PreferencesStore {
  const db = store.db<UserPreferences>('oracle-preferences');
  return {
    get(userDid, oracleDid) {
      return db.get(keyOf(userDid, oracleDid)) ?? null;
    },
    merge(userDid, oracleDid, update) {
      const key = keyOf(userDid, oracleDid);
      // Read and write in one transaction so two concurrent writes (two sessions, two threads) both land.
      return db.transaction(() => {
        const merged = mergePreferences(db.get(key), update, new Date());
        db.put(key, merged);
        return merged;
      });
    },
  };
}
