// Stored user-to-oracle delegations (LMDB `oracle-delegations`), one per (user, oracle), validated before
// they are stored. Later work mints downstream invocations for the user from them.
import type { Store } from '../store/env.js';

export interface StoredDelegation {
  raw: string;
  issuer: string;
  audience: string;
  /** Seconds since the epoch; absent when nothing in the chain expires. */
  expiration?: number;
  storedAt: string;
}

export interface DelegationStatus {
  authorized: boolean;
  expiration?: number;
}

export interface DelegationStore {
  get(userDid: string): StoredDelegation | undefined;
  put(delegation: StoredDelegation): Promise<void>;
  remove(userDid: string): Promise<void>;
  /** `authorized` is false when none is stored, or it has expired. */
  status(userDid: string, nowSeconds?: number): DelegationStatus;
}

export function openDelegationStore(store: Store, oracleDid: string): DelegationStore {
  const db = store.db<StoredDelegation>('oracle-delegations');
  const keyOf = (userDid: string) => `${userDid}|${oracleDid}`;
  const get = (userDid: string) => db.get(keyOf(userDid));
  return {
    get,
    async put(delegation) {
      await db.put(keyOf(delegation.issuer), delegation);
    },
    async remove(userDid) {
      await db.remove(keyOf(userDid));
    },
    status(userDid, nowSeconds = Date.now() / 1000) {
      const stored = get(userDid);
      if (!stored) return { authorized: false };
      const expiration = stored.expiration === undefined ? {} : { expiration: stored.expiration };
      return { authorized: stored.expiration === undefined || stored.expiration > nowSeconds, ...expiration };
    },
  };
}
