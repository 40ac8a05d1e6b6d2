// Thread: any
// Ed25519 signature checks with node:crypto (OpenSSL). ucanto's default verifier is pure JavaScript
// (@noble/ed25519) and about 40 times slower. This file has no other imports so the piscina worker stays light.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { BoundedMap } from '../../base/bounded-map.js';

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

/**
 * The y coordinates (little-endian, sign bit cleared) of the eight points of small order: 0 (order 4), 1 (the
 * identity), p - 1 (order 2) and the two of order 8. With such a key, a signature whose R is a small-order point
 * and S = 0 verifies for any message: the key is anyone's.
 */
const SMALL_ORDER_Y = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
];

/** True for a 32-byte Ed25519 public key that is of small order or not canonically encoded (y >= p = 2^255 - 19). */
export function isUnsafeEd25519Key(publicKey: Uint8Array): boolean {
  if (publicKey.byteLength !== 32) return true;
  // Most keys start with none of the bytes an unsafe y starts with: one comparison on the hot path.
  const first = publicKey[0]!;
  if (first < 0xec && first !== 0x00 && first !== 0x01 && first !== 0x26 && first !== 0xc7) return false;
  const y = Buffer.from(publicKey);
  y[31]! &= 0x7f;
  // y >= p: the top byte 0x7f, thirty bytes 0xff, the first at least 0xed.
  let allOnes = y[31] === 0x7f && y[0]! >= 0xed;
  for (let i = 1; allOnes && i < 31; i++) allOnes = y[i] === 0xff;
  return allOnes || SMALL_ORDER_Y.includes(y.toString('hex'));
}

/**
 * True when `signature` is a valid Ed25519 signature of `data` by `publicKey`; false for any malformed input and
 * for a small-order or non-canonical key.
 */
export function verifyEd25519(publicKey: Uint8Array, data: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.byteLength !== 32 || signature.byteLength !== 64 || isUnsafeEd25519Key(publicKey)) return false;
  try {
    return verify(null, data, ed25519KeyObject(publicKey), signature);
  } catch {
    return false;
  }
}

export function verifyEd25519Checks(checks: readonly SignatureCheck[]): boolean[] {
  return checks.map((check) => verifyEd25519(check.publicKey, check.data, check.signature));
}
