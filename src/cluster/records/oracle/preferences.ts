// Thread: any, cluster mode (the route reads, the chat actors' tool writes)
// Preferences in the JetStream KV bucket
// `oracle_preferences`, keyed `<userDid>.<oracleDid>`.
import type { ClusterConnection } from '../../connection.js';
import { openJetStreamRevisionedRecords } from './revisioned-records.js';
import type { PreferencesKey, PreferencesRepository } from '../../../oracle/plugins/user-preferences/repository.js';
import type { UserPreferences } from '../../../oracle/plugins/user-preferences/schema.js';

export function openJetStreamPreferences(connection: ClusterConnection): Promise<PreferencesRepository> {
  return openJetStreamRevisionedRecords<PreferencesKey, UserPreferences>(
    connection,
    'oracle_preferences',
    ({ userDid, oracleDid }) => [userDid, oracleDid],
  );
}
