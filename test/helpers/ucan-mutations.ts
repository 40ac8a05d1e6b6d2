// Re-encodings of a signed UCAN, as an attacker holding a leaked delegation would make them: the same signature
// over the same payload, in other bytes or under other CIDs. Each keeps ucanto's own verdict (Delegation.extract
// reads it and its issuer's signature verifies), so the server must refuse them by its own rules.
import { createHash } from 'node:crypto';
import { CAR, CBOR, Delegation as DelegationCodec, decodeLink, delegate, UCAN } from '@ucanto/core';
import type { Delegation, Link, Signer } from '@ucanto/interface';
import { ed25519 } from '@ucanto/principal';

export interface RawBlock {
  cid: Link;
  bytes: Uint8Array;
}

type Model = Record<string, unknown>;

const DAG_CBOR = 0x71;
const RAW = 0x55;
const SHA2_256 = 0x12;
const SHA2_512 = 0x13;

/** A CIDv1 of `codec` whose multihash is `hash` (sha2-256 or sha2-512) of `bytes`. */
export function cidOf(bytes: Uint8Array, codec = DAG_CBOR, hash = SHA2_256): Link {
  const digest = createHash(hash === SHA2_512 ? 'sha512' : 'sha256')
    .update(bytes)
    .digest();
  return decodeLink(Uint8Array.of(1, codec, hash, digest.length, ...digest)) as Link;
}

/** A float64 even when its value is whole (encodeCbor writes whole numbers as integers). */
export class CborFloat {
  constructor(readonly value: number) {}
}

/** A tagged item (tag 42 is a CID: write a Link for a well-formed one). */
export class CborTag {
  constructor(
    readonly tag: number,
    readonly value: unknown,
  ) {}
}

/**
 * A minimal CBOR writer of every major type: map keys in the order given, numbers as float64 when `floats` names
 * their key, bigints as 64-bit integers, CborFloat and CborTag as they say.
 */
export function encodeCbor(
  value: unknown,
  options: { order?: (keys: string[]) => string[]; floats?: Set<string> } = {},
  key = '',
): Uint8Array {
  const head = (major: number, n: number): number[] => {
    if (n < 24) return [(major << 5) | n];
    if (n < 0x100) return [(major << 5) | 24, n];
    if (n < 0x10000) return [(major << 5) | 25, n >> 8, n & 0xff];
    if (n < 0x100000000) return [(major << 5) | 26, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
    const big = Buffer.alloc(8);
    big.writeBigUInt64BE(BigInt(n));
    return [(major << 5) | 27, ...big];
  };
  const concat = (parts: Uint8Array[]) => Uint8Array.from(Buffer.concat(parts));
  if (value === false || value === true || value === null || value === undefined)
    return Uint8Array.of(value === false ? 0xf4 : value === true ? 0xf5 : value === null ? 0xf6 : 0xf7);
  if (typeof value === 'bigint') {
    const big = Buffer.alloc(9);
    big[0] = value >= 0n ? 0x1b : 0x3b;
    big.writeBigUInt64BE(value >= 0n ? value : -1n - value, 1);
    return big;
  }
  if (value instanceof CborFloat) return encodeCbor(value.value, { floats: new Set(['']) });
  if (value instanceof CborTag) return concat([Uint8Array.from(head(6, value.tag)), encodeCbor(value.value, options)]);
  if (typeof value === 'number') {
    if (options.floats?.has(key) || !Number.isInteger(value)) {
      const float = Buffer.alloc(9);
      float[0] = 0xfb;
      float.writeDoubleBE(value, 1);
      return float;
    }
    return Uint8Array.from(value >= 0 ? head(0, value) : head(1, -1 - value));
  }
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return concat([Uint8Array.from(head(3, text.length)), text]);
  }
  const link = (value as { asCID?: Link } | null)?.asCID;
  if (link)
    return concat([
      Uint8Array.of(0xd8, 0x2a),
      Uint8Array.from(head(2, link.bytes.length + 1)),
      Uint8Array.of(0),
      link.bytes,
    ]);
  if (value instanceof Uint8Array) return concat([Uint8Array.from(head(2, value.length)), value]);
  if (Array.isArray(value))
    return concat([Uint8Array.from(head(4, value.length)), ...value.map((item) => encodeCbor(item, options))]);
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    const ordered = (options.order ?? dagCborOrder)(keys);
    return concat([
      Uint8Array.from(head(5, ordered.length)),
      ...ordered.flatMap((k) => [encodeCbor(k), encodeCbor((value as Model)[k], options, k)]),
    ]);
  }
  throw new TypeError(`cannot encode ${String(value)}`);
}

/** DAG-CBOR's key order: shorter first, then bytewise. */
const dagCborOrder = (keys: string[]) => [...keys].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));

/** The UCAN block's DAG-CBOR map, decoded as is. */
const fieldsOf = (delegation: Delegation): Model => CBOR.decode(delegation.root.bytes as never) as Model;

const dagCborBlock = (bytes: Uint8Array): RawBlock => ({ cid: cidOf(bytes), bytes });

/** Every re-encoding of `delegation`'s own block: same signature, same signed payload. */
export function reEncodings(delegation: Delegation): Record<string, RawBlock> {
  const fields = fieldsOf(delegation);
  const bytes = delegation.root.bytes;
  const jwt = Buffer.from(UCAN.format(delegation.data), 'utf8');
  const otherDigest = createHash('sha256').update('not these bytes').digest();
  return {
    'map keys out of order': dagCborBlock(encodeCbor(fields, { order: (keys) => dagCborOrder(keys).reverse() })),
    'exp written as a float64': dagCborBlock(encodeCbor(fields, { floats: new Set(['exp']) })),
    'nbf: 0 added': dagCborBlock(encodeCbor({ ...fields, nbf: 0 })),
    'an unknown field added': dagCborBlock(encodeCbor({ ...fields, zzz: 'not signed' })),
    'a CID that does not match its bytes': {
      cid: decodeLink(Uint8Array.of(1, DAG_CBOR, SHA2_256, 32, ...otherDigest)) as Link,
      bytes,
    },
    'a sha512 CID': { cid: cidOf(bytes, DAG_CBOR, SHA2_512), bytes },
    'a raw-codec CID': { cid: cidOf(bytes, RAW), bytes },
    'the JWT form': { cid: cidOf(jwt, RAW), bytes: jwt },
    'the JWT form under a dag-cbor CID': { cid: cidOf(jwt), bytes: jwt },
  };
}

/** A delegation view of a block (with the blocks its proofs need), as an attacker passes it on as a proof. */
export const viewOf = (root: RawBlock, blocks: RawBlock[] = []): Delegation =>
  DelegationCodec.create({
    root: root as never,
    blocks: new Map(blocks.map((block) => [`${block.cid}`, block as never])),
  }) as Delegation;

/** Standard base64 of a ucanto archive holding exactly `blocks` (root first), however odd their CIDs. */
export async function archiveOf(root: RawBlock, blocks: RawBlock[] = []): Promise<string> {
  const variant = await CBOR.write({ 'ucan@0.9.1': root.cid });
  const store = new Map<string, unknown>([
    [`${root.cid}`, root],
    ...blocks.map((block) => [`${block.cid}`, block] as const),
  ]);
  return Buffer.from(CAR.encode({ roots: [variant as never], blocks: store as never })).toString('base64');
}

/** ucanto's own reading: the archive extracts, and its root's issuer signed it (ucanto's ed25519 verifier). */
export async function ucantoReadsSigned(raw: string): Promise<Delegation | undefined> {
  const extracted = await DelegationCodec.extract(Buffer.from(raw, 'base64'));
  if (extracted.error) return undefined;
  const delegation = extracted.ok as Delegation;
  const verifier = ed25519.Verifier.parse(delegation.issuer.did() as `did:key:${string}`);
  return (await UCAN.verifySignature(delegation.data, verifier)) ? delegation : undefined;
}

/**
 * A delegation to `audience` whose proofs, `levels` deep, each link the level below `perLevel` times (all issued by
 * `issuer` to itself): a few blocks that ucanto's archive() walks perLevel^levels times. Minted with links and
 * archived here by hand, since ucanto's delegate() and archive() would walk every path themselves.
 */
export async function repeatedLinkDelegation(
  issuer: Signer,
  audience: string,
  perLevel: number,
  levels: number,
): Promise<string> {
  const self = { did: () => issuer.did() };
  let level: Delegation = await delegate({ issuer, audience: self, capabilities: [{ can: '*', with: 'ixo:oracle' }] });
  const blocks: RawBlock[] = [level.root as RawBlock];
  for (let i = 0; i < levels; i++) {
    const to = i === levels - 1 ? { did: () => audience as `did:${string}:${string}` } : self;
    level = await delegate({
      issuer,
      audience: to,
      capabilities: [{ can: '*', with: 'ixo:oracle' }],
      proofs: Array(perLevel).fill(level.cid),
    });
    blocks.push(level.root as RawBlock);
  }
  return archiveOf(blocks.pop()!, blocks);
}
