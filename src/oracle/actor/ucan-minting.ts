// Thread: actor host
// Downstream invocations for a user: the oracle signs an invocation to another service (an MCP server, or
// any UCAN-protected API a plugin calls) with the user's stored delegation as its proof, so the service can
// follow the chain back to the user. Usable on any thread: it reads the delegation from LMDB and signs with
// the oracle's key; nothing is resolved or verified here (the delegation was verified when it was stored).
import { randomUUID } from 'node:crypto';
import { invoke } from '@ucanto/core';
import type { Capability, Delegation, DID, Signer } from '@ucanto/interface';
import { decodeArtifact } from '../auth/artifact.js';
import { encodeArtifact } from '../auth/mint.js';
import type { DelegationRepository } from '../identity/delegations.js';
import { loadOracleIdentity, type OracleIdentityEnv } from '../identity/identity.js';
import { BoundedMap } from '../../base/bounded-map.js';

/** Default lifetime of a minted invocation; it never outlives the user's delegation. */
export const MINTED_TTL_SECONDS = 300;

export type MissingDelegationReason = 'none' | 'expired' | 'unreadable';

/** The user has no delegation the oracle can use: the user has to authorise the oracle again. */
export class ReauthorisationRequired extends Error {
  constructor(
    readonly userDid: string,
    readonly reason: MissingDelegationReason,
    oracleDid: string,
  ) {
    const why = {
      none: 'no delegation from you is stored (it was revoked or never given)',
      expired: 'your delegation to this oracle has expired',
      unreadable: 'your stored delegation cannot be read',
    }[reason];
    super(
      `Re-authorisation needed: ${why}. Please authorise this oracle (${oracleDid}) again: ` +
        'sign a new delegation to it and send it to POST /delegation, then ask again.',
    );
    this.name = 'ReauthorisationRequired';
  }
}

export interface MintRequest {
  userDid: string;
  /** The DID of the service that will check the invocation. */
  audience: string;
  capability: Capability;
  /** Shorter lifetimes are allowed; longer ones are cut to the delegation's expiration. */
  ttlSeconds?: number;
}

export interface UcanMinter {
  /** A base64 CAR invocation signed by the oracle, with the user's delegation as proof; throws ReauthorisationRequired. */
  mintForUser(request: MintRequest): Promise<string>;
}

export interface MinterDeps {
  /** The oracle's signer and DID (loaded lazily: chat services are built before anyone needs a key). */
  identity: () => Promise<{ did: string; signer: Signer }>;
  /** The stored delegations of this oracle. */
  delegations: (oracleDid: string) => DelegationRepository;
  now?: () => number;
}

export function createUcanMinter(deps: MinterDeps): UcanMinter {
  const now = deps.now ?? (() => Date.now() / 1000);
  // Decoding a CAR costs more than signing: the last decoded delegation of each user is kept by its text.
  const decoded = new BoundedMap<string, { raw: string; delegation: Delegation }>(1000);

  /** The user's delegation and the earliest expiration along its chain (seconds; Infinity when none). */
  async function usableDelegation(
    userDid: string,
    oracleDid: string,
  ): Promise<{ delegation: Delegation; expiration: number }> {
    const stored = await deps.delegations(oracleDid).get(userDid);
    if (!stored) throw new ReauthorisationRequired(userDid, 'none', oracleDid);
    if (stored.expiration !== undefined && stored.expiration <= now())
      throw new ReauthorisationRequired(userDid, 'expired', oracleDid);
    const expiration = stored.expiration ?? Infinity;
    const cached = decoded.get(userDid);
    if (cached?.raw === stored.raw) return { delegation: cached.delegation, expiration };
    let delegation: Delegation;
    try {
      delegation = await decodeArtifact(stored.raw);
    } catch {
      throw new ReauthorisationRequired(userDid, 'unreadable', oracleDid);
    }
    decoded.set(userDid, { raw: stored.raw, delegation });
    return { delegation, expiration };
  }

  return {
    async mintForUser({ userDid, audience, capability, ttlSeconds = MINTED_TTL_SECONDS }) {
      const { did, signer } = await deps.identity();
      const { delegation, expiration: delegationExpiration } = await usableDelegation(userDid, did);
      const expiration = Math.min(Math.floor(now()) + ttlSeconds, delegationExpiration);
      const invocation = await invoke({
        issuer: signer,
        audience: { did: () => audience as DID },
        capability,
        proofs: [delegation],
        expiration,
        // Two calls in the same second must not be the same UCAN, or a server with replay protection refuses the second.
        nonce: randomUUID(),
      }).delegate();
      return encodeArtifact(invocation);
    },
  };
}

/** The minter of a thread: the identity from the configuration, the users' delegations from the composition root. */
export function ucanMinterFor({
  config,
  delegations,
}: {
  config: OracleIdentityEnv;
  delegations: (oracleDid: string) => DelegationRepository;
}): UcanMinter {
  let identity: ReturnType<typeof loadOracleIdentity> | undefined;
  return createUcanMinter({
    identity: () =>
      (identity ??= loadOracleIdentity(config).catch((error: unknown) => {
        identity = undefined;
        throw error;
      })),
    delegations,
  });
}
