// Revoked delegations by CID (LMDB `oracle-revocations`), kept until the delegation would have expired, so a
// revoked delegation, and every invocation that carries it as a proof, is refused on every transport and
// across restarts. Read on each authentication (after the verification cache), so a revocation takes effect
// at once even for artifacts verified before it.
import type { Store } from '../store/env.js';

interface Revocation {
  /** Seconds since the epoch after which the delegation is refused anyway (expired); null: it never expires. */
  until: number | null;
  revokedAt: string;
}

export interface RevocationList {
  isRevoked(cid: string, nowSeconds?: number): boolean;
  /** `expiration`: the delegation's own (seconds), absent when it never expires. */
  revoke(cid: string, expiration?: number): Promise<void>;
}

export function openRevocationList(store: Store): RevocationList {
  const db = store.db<Revocation>('oracle-revocations');
  return {
    isRevoked(cid, nowSeconds = Date.now() / 1000) {
      const revocation = db.get(cid);
      return revocation !== undefined && (revocation.until === null || revocation.until > nowSeconds);
    },
    async revoke(cid, expiration) {
      await db.put(cid, { until: expiration ?? null, revokedAt: new Date().toISOString() });
    },
  };
}
