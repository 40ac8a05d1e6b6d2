// Thread: any (each authentication reads it)
// Revocations in the LMDB database `oracle-revocations`, by revocation key.
import type { Store } from '../store/env.js';
import { stillRevoked, type Revocation, type RevocationRepository } from './identity/revocations.js';

export function openLmdbRevocations(store: Store): RevocationRepository {
  const db = store.db<Revocation>('oracle-revocations');
  const listeners: ((cid: string) => void)[] = [];
  return {
    isRevoked: async (cid, nowSeconds = Date.now() / 1000) => stillRevoked(db.get(cid), nowSeconds),
    firstRevoked: async (keys, nowSeconds = Date.now() / 1000) =>
      keys.find((key) => stillRevoked(db.get(key), nowSeconds)),
    async revoke(cid, expiration) {
      await db.put(cid, { until: expiration ?? null, revokedAt: new Date().toISOString() });
      for (const listener of listeners) listener(cid);
    },
    onRevoked: (listener) => void listeners.push(listener),
  };
}
