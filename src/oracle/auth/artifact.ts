// UCAN artifacts as they travel: standard base64 of a ucanto archive (CARv1), read with Delegation.extract.
import { Delegation, isDelegation, UCAN } from '@ucanto/core';
import type { Delegation as DelegationView } from '@ucanto/interface';
import { fail } from './failure.js';

/** Headers are bounded by the HTTP server anyway; this keeps a hostile artifact's decoding cost small. */
export const MAX_ARTIFACT_CHARS = 64 * 1024;
/** Longest proof chain accepted (the artifact and all its proofs). */
export const MAX_CHAIN_LENGTH = 16;

const BASE64 = /^[A-Za-z0-9+/\-_]+={0,2}$/;

/** Decodes a base64 ucanto archive into its root delegation (an invocation is a delegation too). */
export async function decodeArtifact(value: string): Promise<DelegationView> {
  const text = value.replace(/\s+/g, '');
  if (text.length === 0) fail('empty UCAN artifact');
  if (text.length > MAX_ARTIFACT_CHARS) fail(`UCAN artifact longer than ${MAX_ARTIFACT_CHARS} characters`);
  if (!BASE64.test(text)) fail('UCAN artifact is not base64');
  const extracted = await Delegation.extract(Buffer.from(text, 'base64'));
  if (extracted.error) fail(`UCAN artifact is not a ucanto archive (${extracted.error.message})`);
  return extracted.ok;
}

/** The delegation and every proof it embeds, depth first, each once. Proofs sent only as links are not here. */
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

/** Refuses a delegation outside its time bounds. */
export function checkTimeBounds(delegation: DelegationView, role: string): void {
  if (UCAN.isExpired(delegation.data)) {
    fail(`${role} ${delegation.cid} expired at ${new Date(delegation.expiration * 1000).toISOString()}`);
  }
  if (UCAN.isTooEarly(delegation.data)) {
    fail(`${role} ${delegation.cid} is not valid before ${new Date((delegation.notBefore ?? 0) * 1000).toISOString()}`);
  }
}

/** The earliest expiration along the chain (seconds); Infinity when nothing in it expires. */
export function chainExpiration(chain: readonly DelegationView[]): number {
  return Math.min(...chain.map((d) => d.expiration ?? Infinity));
}
