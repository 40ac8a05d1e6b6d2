// Thread: any
// Preferences as the plugin uses them, over a PreferencesRepository: read, and merge a change
// into the stored record (read, merge, revision-checked write; redone on a conflict, so concurrent changes of
// different fields from two sessions both land).
import { changeRecord } from '../../revisions.js';
import type { PreferencesRepository } from './repository.js';
import { mergePreferences, type PreferencesUpdate, type UserPreferences } from './schema.js';

export interface PreferencesStore {
  get(userDid: string, oracleDid: string): Promise<UserPreferences | null>;
  /** Merges `update` into the stored record; resolves once it is stored. */
  merge(userDid: string, oracleDid: string, update: PreferencesUpdate): Promise<UserPreferences>;
}

export function preferencesStore(repository: PreferencesRepository): PreferencesStore {
  return {
    async get(userDid, oracleDid) {
      return (await repository.get({ userDid, oracleDid }))?.value ?? null;
    },
    merge(userDid, oracleDid, update) {
      return changeRecord(repository, { userDid, oracleDid }, (current) => {
        const merged = mergePreferences(current, update, new Date());
        return { value: merged, result: merged };
      });
    },
  };
}
