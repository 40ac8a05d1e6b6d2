// Thread: main
// What a revocation is keyed on: the issuer's signature, not the CID. The signature covers the signed payload
// whatever bytes carry it, so every re-encoding of a revoked delegation (another CID, the JWT form, an unknown
// field added) has the same key; and a delegation with another signature is another delegation.
import type { Delegation } from '@ucanto/interface';

/** `sig-` and the raw signature in base64url: a plain NATS KV token and LMDB key. */
export function revocationKey(signature: Uint8Array): string {
  return `sig-${Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString('base64url')}`;
}

/** The revocation key of a decoded delegation or invocation. */
export const revocationKeyOf = (delegation: Delegation): string => revocationKey(delegation.signature.raw);
