// Thread: any, cluster mode (the front door stores, the actors mint from them)
// Delegations in the JetStream KV bucket
// `oracle_delegations`, keyed `<userDid>.<oracleDid>`. The last one stored wins, so writes are plain puts.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore } from '../../record-store.js';
import type { DelegationRepository, StoredDelegation } from '../../../oracle/identity/delegations.js';

/** The bucket, opened once; the answer gives the repository of one oracle's delegations. */
export async function openJetStreamDelegations(
  connection: ClusterConnection,
): Promise<(oracleDid: string) => DelegationRepository> {
  const store = await KvRecordStore.open<StoredDelegation>(connection, { name: 'oracle_delegations' });
  return (oracleDid) => ({
    get: async (userDid) => (await store.get([userDid, oracleDid]))?.value,
    async put(delegation) {
      await store.put([delegation.issuer, oracleDid], delegation);
    },
    remove: (userDid) => store.delete([userDid, oracleDid]),
  });
}
