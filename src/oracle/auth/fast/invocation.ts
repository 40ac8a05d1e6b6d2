// Thread: main, hand-written for the hot path (cold UCAN verification)
// The whole check of a common-shape
// invocation (a did:key Ed25519 issuer, no proofs; see ucan.ts) without ucanto's decode, payload format and
// access(). It decides exactly as invocation.ts would, with the same reasons; an artifact outside the shape
// answers undefined and goes through ucanto's path. Equivalence: test/oracle-auth-fast-path.test.ts.
import { base58btc } from '@ucanto/core';
import { checkTimeWindow } from '../artifact.js';
import { fail, VerifierUnavailable } from '../failure.js';
import { revocationKey } from '../revocation-key.js';
import type { SignatureVerifier } from '../verifier.js';
import { readArchive } from './archive.js';
import { cidText } from './cid-text.js';
import { signedPayload } from './payload.js';
import { OutOfShape } from './shape.js';
import { readCommonUcan } from './ucan.js';
import { BoundedMap } from '../../../base/bounded-map.js';

export interface FastInvocationCheck {
  maxTtlSeconds: number;
  verifier: SignatureVerifier;
}

export interface FastVerified {
  did: string;
  expiration: number;
  /** No proofs, so no delegation whose end would end the authority (AuthIdentity.authorityExpiration). */
  authorityExpiration: number;
  /** The invocation's revocation key: its whole chain. */
  chain: [string];
  /** Its key and its CID (revocations made before the keys were signatures name CIDs). */
  revocationKeys: [string, string];
}

/** The audience as dag-ucan encodes it, and as JSON; undefined when the oracle's DID is not a plain one. */
export interface FastAudience {
  bytes: Uint8Array;
  json: string;
}

/** dag-ucan's DID bytes: a did:key's multicodec key (Ed25519 here), else varint 0x0d1d then the text after `did:`. */
export function fastAudience(oracleDid: string): FastAudience | undefined {
  if (!/^did:[a-z0-9]+:[\x21-\x7e]+$/.test(oracleDid)) return undefined;
  const json = JSON.stringify(oracleDid);
  if (!oracleDid.startsWith('did:key:'))
    return { bytes: Uint8Array.of(0x9d, 0x1a, ...Buffer.from(oracleDid.slice(4), 'latin1')), json };
  try {
    const bytes = base58btc.decode(oracleDid.slice('did:key:'.length));
    const ed25519 = bytes.length === 34 && bytes[0] === 0xed && bytes[1] === 0x01;
    return ed25519 && issuerDid(bytes) === oracleDid ? { bytes, json } : undefined;
  } catch {
    return undefined;
  }
}

const DID_CACHE_LIMIT = 1024;
/** Recent issuer keys -> did:key: a user signs many invocations, and base58 costs more than the rest of a read. */
const didOfKey = new BoundedMap<string, string>(DID_CACHE_LIMIT);

function issuerDid(keyCode: Uint8Array): string {
  const id = Buffer.from(keyCode.buffer, keyCode.byteOffset, keyCode.byteLength).toString('latin1');
  let did = didOfKey.get(id);
  if (!did) {
    did = `did:key:${base58btc.encode(keyCode)}`;
    didOfKey.set(id, did);
  }
  return did;
}

/**
 * Verifies an invocation archive of the common shape addressed to `audience`; undefined when it is out of shape.
 * Throws AuthFailure with invocation.ts's reasons, VerifierUnavailable when the verifier fails.
 */
export async function verifyFastInvocation(
  car: Uint8Array,
  audience: FastAudience,
  check: FastInvocationCheck,
): Promise<FastVerified | undefined> {
  let read: { cid: string; ucan: ReturnType<typeof readCommonUcan> };
  try {
    const archived = readArchive(car);
    read = { cid: cidText(archived.cid), ucan: readCommonUcan(archived.block, audience.bytes) };
  } catch (error) {
    if (error instanceof OutOfShape) return undefined;
    throw error;
  }
  const { cid, ucan } = read;
  // The order of invocation.ts: lifetime, time bounds, then the signature.
  const now = Math.floor(Date.now() / 1000);
  if (ucan.expiration > now + check.maxTtlSeconds)
    fail(`invocation lives longer than the allowed ${check.maxTtlSeconds} seconds`);
  checkTimeWindow('invocation', cid, ucan.expiration, ucan.notBefore, now);
  const did = issuerDid(ucan.issuerKeyCode);
  const data = signedPayload(ucan, did, audience.json);
  let valid: boolean[];
  try {
    valid = await check.verifier([{ publicKey: ucan.issuerKey, data, signature: ucan.signature }]);
  } catch (error) {
    throw new VerifierUnavailable(error);
  }
  // ucanto's InvalidSignature for a did:key issuer, as invocation.ts's describeRefusal reports it.
  if (valid[0] !== true) fail(`Proof ${cid} does not has a valid signature from ${did}`);
  // No proofs: nothing but the user's own key stands behind it.
  const key = revocationKey(ucan.signature);
  return { did, expiration: ucan.expiration, authorityExpiration: Infinity, chain: [key], revocationKeys: [key, cid] };
}
