// Thread: main
// A user-to-oracle delegation: the fallback credential (`x-ucan-delegation` alone) and what POST /delegation
// stores. Checked along the whole proof chain: audience, the oracle capability, time bounds, every signature,
// and each proof carried and addressed to the issuer of the delegation above it.
import type { Delegation } from '@ucanto/interface';
import { chainExpiration, chainOf, checkProofLinks, checkTimeBounds } from './artifact.js';
import { fail } from './failure.js';
import { grantsOracleAccess, ORACLE_RESOURCE } from './invocation.js';
import type { SignatureSession } from './signatures.js';

/** Verifies a delegation to `oracleDid`; answers its issuer and the earliest expiration along the chain. */
export async function verifyDelegation(
  delegation: Delegation,
  oracleDid: string,
  session: SignatureSession,
): Promise<{ did: string; expiration: number; chain: Delegation[] }> {
  const audience = delegation.audience.did();
  if (audience !== oracleDid) fail(`delegation is addressed to ${audience}, not to this oracle (${oracleDid})`);
  // The rule an invocation's capability meets (invocation.ts), so a delegation for something else logs nobody in.
  if (!delegation.capabilities.some(grantsOracleAccess))
    fail(`delegation does not carry the capability { can: '*', with: '${ORACLE_RESOURCE}' }`);
  const chain = chainOf(delegation);
  for (const link of chain) checkTimeBounds(link, link === delegation ? 'delegation' : 'proof');
  checkProofLinks(chain);
  const valid = await session.signaturesValid(chain);
  const forged = chain.find((_, i) => !valid[i]);
  if (forged)
    fail(
      `${forged === delegation ? 'delegation' : 'proof'} ${forged.cid} has an invalid signature from ${forged.issuer.did()}`,
    );
  return { did: delegation.issuer.did(), expiration: chainExpiration(chain), chain };
}
