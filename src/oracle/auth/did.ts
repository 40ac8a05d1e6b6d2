// Thread: main
// Public keys of UCAN issuers. did:key carries its key; any other DID method goes through a DidResolver.
import { base58btc, DID } from '@ucanto/core';
import { isUnsafeEd25519Key } from './ed25519.js';
import { AuthFailure } from './failure.js';
import { BoundedMap } from '../../base/bounded-map.js';

/** Finds the Ed25519 public keys (raw, 32 bytes each) that may sign for a DID. Throws AuthFailure with a reason. */
export interface DidResolver {
  resolve(did: string): Promise<Uint8Array[]>;
}

/** Resolvers by DID method name (`ixo` for did:ixo). */
export type DidResolvers = Record<string, DidResolver>;

/** Multicodec prefix of an Ed25519 public key (varint 0xed). */
export const ED25519_PUB_PREFIX = [0xed, 0x01];

const KEY_CACHE_LIMIT = 1024;
/** Recent did:key -> key: a user signs many invocations, and base58 decoding is a visible share of a verification. */
const keyOfDid = new BoundedMap<string, Uint8Array>(KEY_CACHE_LIMIT);

/** The raw Ed25519 public key inside a did:key; throws AuthFailure for other key types or malformed DIDs. */
export function didKeyPublicKey(did: string): Uint8Array {
  let key = keyOfDid.get(did);
  if (!key) {
    key = parseDidKey(did);
    keyOfDid.set(did, key);
  }
  return key;
}

function parseDidKey(did: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = DID.parse(did as `did:key:${string}`);
  } catch {
    throw new AuthFailure(`${did} is not a valid did:key`);
  }
  if (bytes.byteLength !== 34 || bytes[0] !== ED25519_PUB_PREFIX[0] || bytes[1] !== ED25519_PUB_PREFIX[1]) {
    throw new AuthFailure(`${did} is not an Ed25519 did:key (only Ed25519 keys are accepted)`);
  }
  if (isUnsafeEd25519Key(bytes.subarray(2)))
    throw new AuthFailure(`${did} is a small-order or non-canonical Ed25519 key: anyone can sign for it`);
  return bytes.subarray(2);
}

/** The did:key of a raw Ed25519 public key. */
export function didKeyOf(publicKey: Uint8Array): `did:key:${string}` {
  const bytes = new Uint8Array(34);
  bytes.set(ED25519_PUB_PREFIX, 0);
  bytes.set(publicKey, 2);
  return `did:key:${base58btc.encode(bytes)}`;
}

/** The method of a DID (`key`, `ixo`, ...), or undefined when the string is not a DID. */
export function didMethod(did: string): string | undefined {
  return /^did:([a-z0-9]+):./.exec(did)?.[1];
}

/**
 * The did:ixo slot until the protocol gateway's gRPC client can read the chain's iid module: every did:ixo
 * issuer is refused with this reason. Replace it with `authenticator.setDidResolver('ixo', resolver)`.
 */
export const ixoResolverUnavailable: DidResolver = {
  async resolve(did) {
    throw new AuthFailure(
      `cannot verify ${did}: did:ixo keys are read from the chain's iid module, which this server has not connected; sign with a did:key instead`,
    );
  },
};
