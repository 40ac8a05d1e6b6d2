// Thread: main, hand-written for the hot path (cold UCAN verification)
// Reads the DAG-CBOR block of the common
// UCAN shape: version 0.9.1, an EdDSA signature, a did:key Ed25519 issuer, the expected audience, one capability
// `{ can: '*', with }` and nothing else, a finite expiration, an optional not-before and nonce, no facts, no
// proofs. Keys must come in DAG-CBOR's canonical order. Anything else is out of shape (ucanto's path decides).
import { isUnsafeEd25519Key } from '../ed25519.js';
import { CborReader, MAJOR } from './cbor.js';
import { ascii, outOfShape, startsWith } from './shape.js';

/** The resources `{ can: '*' }` may name for the oracle to accept it (invocation.ts: COVERING_RESOURCES). */
export type CoveringResource = 'ixo:oracle' | 'ixo:*' | 'ucan:*';

export interface CommonUcan {
  /** The raw 32-byte Ed25519 key of the did:key issuer. */
  issuerKey: Uint8Array;
  /** The issuer's key with its multicodec prefix (0xed 0x01): what its did:key encodes. */
  issuerKeyCode: Uint8Array;
  with: CoveringResource;
  /** Seconds since the epoch. */
  expiration: number;
  notBefore?: number;
  nonce?: string;
  /** The raw 64-byte Ed25519 signature. */
  signature: Uint8Array;
}

const KEYS = {
  s: ascii('s'),
  v: ascii('v'),
  att: ascii('att'),
  aud: ascii('aud'),
  exp: ascii('exp'),
  iss: ascii('iss'),
  nbf: ascii('nbf'),
  nnc: ascii('nnc'),
  prf: ascii('prf'),
  can: ascii('can'),
  with: ascii('with'),
};
const VERSION = ascii('0.9.1');
const ANY_ABILITY = ascii('*');
const RESOURCES = (['ixo:oracle', 'ixo:*', 'ucan:*'] as const).map((name) => [name, ascii(name)] as const);
/** varint 0xd0ed (EdDSA), varint 64: the head of dag-ucan's signature bytes. */
const EDDSA_SIGNATURE = Uint8Array.of(0xed, 0xa1, 0x03, 0x40);
/** multicodec ed25519-pub (varint 0xed). */
const ED25519_KEY = Uint8Array.of(0xed, 0x01);

/** Reads a UCAN block of the common shape whose audience is encoded as `audience` (dag-ucan's DID bytes). */
export function readCommonUcan(block: Uint8Array, audience: Uint8Array): CommonUcan {
  const cbor = new CborReader(block);
  const entries = cbor.head(MAJOR.map);
  const field = (name: Uint8Array) =>
    cbor.skipText(name) || outOfShape(`UCAN field other than ${String.fromCharCode(...name)} where it was expected`);

  field(KEYS.s);
  const signed = cbor.byteString();
  if (signed.length !== EDDSA_SIGNATURE.length + 64 || !startsWith(signed, 0, EDDSA_SIGNATURE))
    outOfShape('signature other than EdDSA');
  field(KEYS.v);
  if (cbor.head(MAJOR.text) !== VERSION.length || !startsWith(cbor.take(VERSION.length), 0, VERSION))
    outOfShape('UCAN version other than 0.9.1');
  field(KEYS.att);
  if (cbor.head(MAJOR.array) !== 1 || cbor.head(MAJOR.map) !== 2)
    outOfShape('capabilities other than one { can, with }');
  field(KEYS.can);
  if (!cbor.skipText(ANY_ABILITY)) outOfShape("capability other than can: '*'");
  field(KEYS.with);
  const resource = RESOURCES.find(([, bytes]) => cbor.skipText(bytes));
  if (!resource) outOfShape('capability on another resource');
  field(KEYS.aud);
  const aud = cbor.byteString();
  if (aud.length !== audience.length || !startsWith(aud, 0, audience)) outOfShape('another audience');
  field(KEYS.exp);
  const expiration = cbor.head(MAJOR.uint);
  field(KEYS.iss);
  const issuerKeyCode = cbor.byteString();
  if (issuerKeyCode.length !== 34 || !startsWith(issuerKeyCode, 0, ED25519_KEY))
    outOfShape('issuer other than a did:key Ed25519');
  // ucanto's path refuses such a key with its reason.
  if (isUnsafeEd25519Key(issuerKeyCode.subarray(2))) outOfShape('small-order or non-canonical issuer key');
  let read = 7;
  const notBefore = cbor.skipText(KEYS.nbf) ? (read++, cbor.head(MAJOR.uint)) : undefined;
  // dag-ucan leaves out a zero nbf: written, it is not the canonical encoding, which ucanto's path refuses.
  if (notBefore === 0) outOfShape('nbf written as 0');
  const nonce = cbor.skipText(KEYS.nnc) ? (read++, cbor.printableText()) : undefined;
  field(KEYS.prf);
  if (cbor.head(MAJOR.array) !== 0) outOfShape('proofs');
  if (entries !== read || !cbor.done) outOfShape('UCAN with other fields or trailing bytes');
  return {
    issuerKey: issuerKeyCode.subarray(2),
    issuerKeyCode,
    with: resource[0],
    expiration,
    ...(notBefore !== undefined && { notBefore }),
    ...(nonce !== undefined && { nonce }),
    signature: signed.subarray(EDDSA_SIGNATURE.length),
  };
}
