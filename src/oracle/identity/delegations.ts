// Thread: any
// Stored user-to-oracle delegations, one per (user, oracle), validated before they
// are stored (POST /delegation). The actors mint downstream invocations for the user from them. A store
// replaces the user's previous delegation (the last one given wins), so writes need no revision.
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

/** The delegations given to one oracle (the implementation is opened for its DID). */
export interface DelegationRepository {
  get(userDid: string): Promise<StoredDelegation | undefined>;
  /** Stores the delegation of its issuer, replacing theirs. */
  put(delegation: StoredDelegation): Promise<void>;
  remove(userDid: string): Promise<void>;
}

/** `authorized` is false when none is stored, or it has expired. */
export function delegationStatus(
  stored: StoredDelegation | undefined,
  nowSeconds = Date.now() / 1000,
): DelegationStatus {
  if (!stored) return { authorized: false };
  const expiration = stored.expiration === undefined ? {} : { expiration: stored.expiration };
  return { authorized: stored.expiration === undefined || stored.expiration > nowSeconds, ...expiration };
}
