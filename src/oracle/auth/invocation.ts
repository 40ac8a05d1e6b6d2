// Thread: any
// The primary credential: a user-signed invocation of `{ can: '*', with: 'ixo:oracle' }` addressed to this
// oracle. It proves who calls, so it must be short-lived.
import type { Delegation, DID, Verifier } from '@ucanto/interface';
import { access, capability, Schema } from '@ucanto/validator';
import { chainExpiration, chainOf, checkProofLinks, checkTimeBounds } from './artifact.js';
import { fail } from './failure.js';
import type { SignatureSession } from './signatures.js';

export const ORACLE_RESOURCE = 'ixo:oracle';
/** Resources an invocation may name: the oracle itself or a wildcard that covers it. */
const COVERING_RESOURCES = [ORACLE_RESOURCE, 'ixo:*', 'ucan:*'] as const;

/** `{ can: '*', with: 'ixo:oracle' }`, as a ucanto capability parser. */
export const OracleAccess = capability({
  can: '*',
  with: Schema.literal(COVERING_RESOURCES[0])
    .or(Schema.literal(COVERING_RESOURCES[1]))
    .or(Schema.literal(COVERING_RESOURCES[2])),
});

/**
 * The capability rule for a delegation to the oracle, as OracleAccess matches an invocation's: `can` exactly '*'
 * (ucanto matches an invocation's ability exactly) on the oracle or a covering wildcard, case and all.
 */
export const grantsOracleAccess = (cap: { can: string; with: string }): boolean =>
  cap.can === '*' && (COVERING_RESOURCES as readonly string[]).includes(cap.with);

// `ixo:oracle` is not a resource someone owns: any principal may invoke it to prove who it is
// (ucanto's default only lets a principal self-issue capabilities on its own DID).
const canIssue = (cap: { with: string }, issuer: DID) =>
  (COVERING_RESOURCES as readonly string[]).includes(cap.with) || cap.with === issuer;

export interface InvocationCheck {
  oracleDid: string;
  /** Verifier of the oracle's own key, under the oracle DID (ucanto's `authority`). */
  authority: Verifier;
  maxTtlSeconds: number;
  session: SignatureSession;
}

/** Verifies an invocation; answers the issuer's DID and the earliest expiration along its chain. */
export async function verifyInvocation(
  invocation: Delegation,
  check: InvocationCheck,
): Promise<{ did: string; expiration: number; chain: Delegation[] }> {
  // Cheap checks first: a stale or misaddressed token costs no signature check.
  const audience = invocation.audience.did();
  if (audience !== check.oracleDid)
    fail(`invocation is addressed to ${audience}, not to this oracle (${check.oracleDid})`);
  if (!Number.isFinite(invocation.expiration)) fail('invocation must declare an expiration');
  const latest = Math.floor(Date.now() / 1000) + check.maxTtlSeconds;
  if (invocation.expiration > latest) fail(`invocation lives longer than the allowed ${check.maxTtlSeconds} seconds`);
  const chain = chainOf(invocation);
  checkTimeBounds(invocation, 'invocation');
  for (const proof of chain.slice(1)) checkTimeBounds(proof, 'proof');
  // Every proof carried and addressed to the issuer above it: the chain and authorityExpiration reported from
  // it are made of verified proofs only.
  checkProofLinks(chain);

  const proofs = chain.slice(1);
  // The issuer's keys first: an issuer whose DID cannot be resolved is refused with the resolver's reason.
  await check.session.keysOf(invocation.issuer.did());
  const valid = await check.session.signaturesValid(proofs);
  const forged = proofs.find((_, i) => !valid[i]);
  if (forged) fail(`proof ${forged.cid} has an invalid signature from ${forged.issuer.did()}`);

  // The invocation's own signature is checked by ucanto's validator, through the session's principal parser.
  // `as never`: ucanto types the invocation after the capability it is checked against, which is what we check here.
  const result = await access(invocation as never, {
    capability: OracleAccess,
    authority: check.authority,
    principal: check.session.principal,
    resolveDIDKey: check.session.resolveDIDKey,
    canIssue,
    validateAuthorization: () => ({ ok: {} }),
  });
  if (result.error) fail(describeRefusal(result.error));
  return { did: invocation.issuer.did(), expiration: chainExpiration(chain), chain };
}

/** One line out of ucanto's Unauthorized error tree. */
function describeRefusal(error: {
  invalidProofs?: Array<{ message: string }>;
  unknownCapabilities?: unknown[];
  delegationErrors?: unknown[];
  message: string;
}): string {
  const [invalid] = error.invalidProofs ?? [];
  if (invalid) return invalid.message.split('\n')[0]!;
  if ((error.unknownCapabilities?.length ?? 0) > 0 || (error.delegationErrors?.length ?? 0) > 0) {
    return `invocation does not carry the capability { can: '*', with: '${ORACLE_RESOURCE}' }`;
  }
  return error.message.split('\n')[0]!;
}
