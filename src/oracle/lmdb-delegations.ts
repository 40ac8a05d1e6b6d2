// Thread: any (the front door stores, the actors mint from them)
// Delegations in the LMDB database
// `oracle-delegations`, keyed `<userDid>|<oracleDid>` (`|` cannot occur in a DID).
import type { Store } from '../store/env.js';
import type { DelegationRepository, StoredDelegation } from './identity/delegations.js';

export function openLmdbDelegations(store: Store, oracleDid: string): DelegationRepository {
  const db = store.db<StoredDelegation>('oracle-delegations');
  const keyOf = (userDid: string) => `${userDid}|${oracleDid}`;
  return {
    get: async (userDid) => db.get(keyOf(userDid)),
    async put(delegation) {
      await db.put(keyOf(delegation.issuer), delegation);
    },
    async remove(userDid) {
      await db.remove(keyOf(userDid));
    },
  };
}
