// Thread: any
// Revoked delegations by revocation key (auth/revocation-key.ts: the issuer's
// signature, the same in every encoding of the delegation), kept until the delegation would have expired, so a
// revoked delegation, and every invocation that carries it as a proof, is refused on every transport and
// across restarts. Read on each authentication (after the verification cache), so a revocation takes effect
// at once even for artifacts verified before it. A revocation is only ever added (writing it twice is the
// same as once), so writes need no revision.
export interface RevocationRepository {
  isRevoked(cid: string, nowSeconds?: number): Promise<boolean>;
  /** The first of `keys` still revoked, or undefined: one catch-up for the whole chain (what authentication asks). */
  firstRevoked(keys: readonly string[], nowSeconds?: number): Promise<string | undefined>;
  /** `expiration`: the delegation's own (seconds), absent when it never expires. */
  revoke(cid: string, expiration?: number): Promise<void>;
  /**
   * Calls `listener` with the key of each revocation this node learns of from now on: its own writes, and in
   * cluster mode every node's (the event channel closes the sockets authenticated with it).
   */
  onRevoked(listener: (cid: string) => void): void;
}

export interface Revocation {
  /** Seconds since the epoch after which the delegation is refused anyway (expired); null: it never expires. */
  until: number | null;
  revokedAt: string;
}

export const stillRevoked = (revocation: Revocation | undefined, nowSeconds: number): boolean =>
  revocation !== undefined && (revocation.until === null || revocation.until > nowSeconds);
