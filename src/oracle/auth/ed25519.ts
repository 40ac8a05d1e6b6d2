// Ed25519 signature checks with node:crypto (OpenSSL). ucanto's default verifier is pure JavaScript
// (@noble/ed25519) and about 40 times slower. This file has no other imports so the piscina worker stays light.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { BoundedMap } from '../../bounded-map.js';

/** One signature to check: a raw 32-byte public key, the signed bytes and the raw 64-byte signature. */
export interface SignatureCheck {
  publicKey: Uint8Array;
  data: Uint8Array;
  signature: Uint8Array;
}

// DER header of a SubjectPublicKeyInfo for Ed25519 (OID 1.3.101.112); the raw key follows it.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const KEY_CACHE_LIMIT = 1024;
const keys = new BoundedMap<string, KeyObject>(KEY_CACHE_LIMIT);

/** A KeyObject for a raw Ed25519 public key; recent ones are kept because parsing costs as much as a check. */
export function ed25519KeyObject(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('base64');
  let key = keys.get(id);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey]), format: 'der', type: 'spki' });
    keys.set(id, key);
  }
  return key;
}

/** True when `signature` is a valid Ed25519 signature of `data` by `publicKey`; false for any malformed input. */
export function verifyEd25519(publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.byteLength !== 32 || signature.byteLength !== 64) return false;
  try {
    return verify(null, data, ed25519KeyObject(publicKey), signature);
  } catch {
    return false;
  }
}

export function verifyEd25519Checks(checks: readonly SignatureCheck[]): boolean[] {
  return checks.map((check) => verifyEd25519(check.publicKey, check.data, check.signature));
}
