// Thread: any
// Where preferences live, one record per (user DID, oracle DID). The `set_user_preferences`
// tool of any session may write a user's record, so writes are create-only or revision-checked (store.ts merges
// with a retry on conflict).
import type { RevisionedRecords } from '../../revisions.js';
import type { UserPreferences } from './schema.js';

export interface PreferencesKey {
  userDid: string;
  oracleDid: string;
}

export type PreferencesRepository = RevisionedRecords<PreferencesKey, UserPreferences>;
