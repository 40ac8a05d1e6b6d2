// Thread: any
// Ed25519 signers for UCANs that make keys and sign with node:crypto (OpenSSL). ucanto's own signer computes in
// pure JavaScript (@noble/ed25519): its first key or signature builds a table of points, about 0.7 s of CPU that
// every start making a key paid, and each signature after that costs milliseconds instead of microseconds. The
// signer stays ucanto's (the same bytes, DID, archive and format); only the key generation and `sign` differ.
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { Signature } from '@ucanto/core';
import { ed25519 } from '@ucanto/principal';

type EdSigner = ed25519.EdSigner;

/** ucanto's layout: varint(0x1300) ed25519-priv, the 32-byte seed, varint(0xed) ed25519-pub, the 32-byte key. */
const PRIVATE_TAG = [0x80, 0x26];
const PUBLIC_TAG = [0xed, 0x01];
const KEY_BYTES = 32;
/** DER header of a PKCS#8 Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** `signer` with `sign` done by OpenSSL under the same seed: the same signatures, without the JavaScript math. */
function signingNatively(signer: EdSigner): EdSigner {
  const seed = signer.encode().subarray(PRIVATE_TAG.length, PRIVATE_TAG.length + KEY_BYTES);
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const code = signer.signatureCode;
  Object.defineProperty(signer, 'sign', {
    value: async (payload: Uint8Array) => Signature.create(code, new Uint8Array(sign(null, payload, key))),
  });
  return signer;
}

/** A fresh Ed25519 key as a ucanto signer. */
export function generateSigner(): EdSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url');
  const key = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const bytes = new Uint8Array(Buffer.concat([Buffer.from(PRIVATE_TAG), seed, Buffer.from(PUBLIC_TAG), key]));
  return signingNatively(ed25519.decode(bytes));
}

/** A key in ucanto's formatted form (`ed25519.format`, what ORACLE_PRIVATE_KEY and key files hold). */
export const parseSigner = (text: string): EdSigner => signingNatively(ed25519.parse(text.trim()));
