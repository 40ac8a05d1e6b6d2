// A user-to-oracle delegation: the fallback credential (`x-ucan-delegation` alone) and what POST /delegation
// stores. Checked along the whole proof chain: audience, time bounds, every signature, and each proof
// addressed to the issuer of the delegation above it.
import { isDelegation } from '@ucanto/core';
import type { Delegation } from '@ucanto/interface';
import { chainExpiration, chainOf, checkTimeBounds } from './artifact.js';
import { fail } from './failure.js';
import type { SignatureSession } from './signatures.js';

/** Verifies a delegation to `oracleDid`; answers its issuer and the earliest expiration along the chain. */
export async function verifyDelegation(
  delegation: Delegation,
  oracleDid: string,
  session: SignatureSession,
): Promise<{ did: string; expiration: number; chain: Delegation[] }> {
  const audience = delegation.audience.did();
  if (audience !== oracleDid) fail(`delegation is addressed to ${audience}, not to this oracle (${oracleDid})`);
  const chain = chainOf(delegation);
  for (const link of chain) {
    checkTimeBounds(link, link === delegation ? 'delegation' : 'proof');
    for (const proof of link.proofs) {
      if (!isDelegation(proof)) fail(`proof ${proof} of ${link.cid} is not included in the archive`);
      if (proof.audience.did() !== link.issuer.did()) {
        fail(`broken chain: proof ${proof.cid} is addressed to ${proof.audience.did()}, not to ${link.issuer.did()} who issued ${link.cid}`);
      }
    }
  }
  const valid = await session.signaturesValid(chain);
  const forged = chain.find((_, i) => !valid[i]);
  if (forged) fail(`${forged === delegation ? 'delegation' : 'proof'} ${forged.cid} has an invalid signature from ${forged.issuer.did()}`);
  return { did: delegation.issuer.did(), expiration: chainExpiration(chain), chain };
}
