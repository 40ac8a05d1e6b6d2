// Thread: any, cluster mode (the route reads, the chat actors' tool writes)
// Preferences in the JetStream KV bucket
// `oracle_preferences`, keyed `<userDid>.<oracleDid>`.
import type { ClusterConnection } from '../../../cluster/connection.js';
import { openJetStreamRevisionedRecords } from '../../jetstream-revisioned-records.js';
import type { PreferencesKey, PreferencesRepository } from './repository.js';
import type { UserPreferences } from './schema.js';

export function openJetStreamPreferences(connection: ClusterConnection): Promise<PreferencesRepository> {
  return openJetStreamRevisionedRecords<PreferencesKey, UserPreferences>(
    connection,
    'oracle_preferences',
    ({ userDid, oracleDid }) => [userDid, oracleDid],
  );
}
