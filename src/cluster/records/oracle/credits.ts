// Thread: any, cluster mode (actor hosts charge in a turn)
// Credit accounts in the JetStream KV bucket `oracle_credits`, keyed
// by the user's DID; every debit is a revision-checked write, so nodes charging one user at once never double-spend.
import type { ClusterConnection } from '../../connection.js';
import { openJetStreamRevisionedRecords } from './revisioned-records.js';
import type { CreditAccount, CreditRepository } from '../../../oracle/plugins/credits/repository.js';

export function openJetStreamCredits(connection: ClusterConnection): Promise<CreditRepository> {
  return openJetStreamRevisionedRecords<string, CreditAccount>(connection, 'oracle_credits', (userDid) => [userDid]);
}
