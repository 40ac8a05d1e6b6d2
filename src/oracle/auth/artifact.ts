// Thread: any
// UCAN artifacts as they travel: standard base64 of a ucanto archive (CARv1) in its canonical encoding
// (canonical-archive.ts).
import { isDelegation, UCAN } from '@ucanto/core';
import type { Delegation as DelegationView } from '@ucanto/interface';
import { MAX_CHAIN_LENGTH, readCanonicalArchive } from './canonical-archive.js';
import { fail } from './failure.js';

export { MAX_CHAIN_LENGTH };

/** Headers are bounded by the HTTP server anyway; this keeps a hostile artifact's decoding cost small. */
export const MAX_ARTIFACT_CHARS = 64 * 1024;
const BASE64 = /^[A-Za-z0-9+/\-_]+={0,2}$/;

/** The bytes of a base64 ucanto archive, refused when empty, too long or not base64. */
export function artifactBytes(value: string): Buffer {
  const text = value.replace(/\s+/g, '');
  if (text.length === 0) fail('empty UCAN artifact');
  if (text.length > MAX_ARTIFACT_CHARS) fail(`UCAN artifact longer than ${MAX_ARTIFACT_CHARS} characters`);
  if (!BASE64.test(text)) fail('UCAN artifact is not base64');
  return Buffer.from(text, 'base64');
}

/** The root delegation of a canonical ucanto archive (an invocation is a delegation too). */
export async function extractArtifact(bytes: Uint8Array): Promise<DelegationView> {
  return readCanonicalArchive(bytes);
}

/** Decodes a base64 ucanto archive into its root delegation. */
export function decodeArtifact(value: string): Promise<DelegationView> {
  return extractArtifact(artifactBytes(value));
}

/** The delegation and every proof it embeds, depth first, each once (readCanonicalArchive refused link-only proofs). */
export function chainOf(root: DelegationView): DelegationView[] {
  const seen = new Map<string, DelegationView>();
  const visit = (delegation: DelegationView) => {
    const id = delegation.cid.toString();
    if (seen.has(id)) return;
    seen.set(id, delegation);
    if (seen.size > MAX_CHAIN_LENGTH) fail(`UCAN proof chain longer than ${MAX_CHAIN_LENGTH} delegations`);
    for (const proof of delegation.proofs) if (isDelegation(proof)) visit(proof);
  };
  visit(root);
  return [...seen.values()];
}

/**
 * Refuses a chain in which a proof is not carried in the archive, or is addressed to someone other than the
 * issuer of the delegation (or invocation) above it.
 */
export function checkProofLinks(chain: readonly DelegationView[]): void {
  for (const link of chain) {
    for (const proof of link.proofs) {
      if (!isDelegation(proof)) fail(`proof ${proof} of ${link.cid} is not included in the archive`);
      if (proof.audience.did() !== link.issuer.did()) {
        fail(
          `broken chain: proof ${proof.cid} is addressed to ${proof.audience.did()}, not to ${link.issuer.did()} who issued ${link.cid}`,
        );
      }
    }
  }
}

/** Refuses a delegation outside its time bounds. */
export function checkTimeBounds(delegation: DelegationView, role: string): void {
  checkTimeWindow(role, `${delegation.cid}`, delegation.expiration, delegation.notBefore);
}

/** Refuses a UCAN outside [notBefore, expiration) as dag-ucan's isTooEarly/isExpired decide it (whole seconds). */
export function checkTimeWindow(
  role: string,
  cid: string,
  expiration: number,
  notBefore: number | undefined,
  now = UCAN.now(),
): void {
  if (expiration <= now) fail(`${role} ${cid} expired at ${new Date(expiration * 1000).toISOString()}`);
  if (notBefore != null && now <= notBefore)
    fail(`${role} ${cid} is not valid before ${new Date(notBefore * 1000).toISOString()}`);
}

/** The earliest expiration along the chain (seconds); Infinity when nothing in it expires. */
export function chainExpiration(chain: readonly DelegationView[]): number {
  return Math.min(...chain.map((d) => d.expiration ?? Infinity));
}
