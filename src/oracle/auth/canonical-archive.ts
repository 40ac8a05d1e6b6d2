// Thread: any
// The ucanto path's reader of an artifact: a ucanto archive (CARv1) accepted only in the one encoding ucanto
// itself writes, so that a delegation has one set of bytes and one CID. Every block must be DAG-CBOR under a
// CIDv1 sha2-256 that matches its bytes; every UCAN block must be exactly what dag-ucan encodes for it (keys in
// order, integers as integers, no optional field written empty, no unknown field, not the JWT form). The proofs
// form a tree of at most MAX_CHAIN_LENGTH delegations, each carried in the archive and linked once, so nothing
// later (access(), archive() when minting for a user) walks more paths than there are blocks.
import { createHash } from 'node:crypto';
import { CAR, CBOR, Delegation, isDelegation, isLink, UCAN } from '@ucanto/core';
import type { Delegation as DelegationView } from '@ucanto/interface';
import { AuthFailure, fail } from './failure.js';

/** Longest proof chain accepted (the artifact and all its proofs). */
export const MAX_CHAIN_LENGTH = 16;

const DAG_CBOR = 0x71;
const SHA2_256 = 0x12;

interface Block {
  cid: { version: number; code: number; multihash: { code: number; digest: Uint8Array }; toString(): string };
  bytes: Uint8Array;
}

/** The root delegation of a canonical ucanto archive (an invocation is a delegation too); AuthFailure otherwise. */
export function readCanonicalArchive(bytes: Uint8Array): DelegationView {
  let roots: Block[];
  let blocks: Map<string, Block>;
  try {
    ({ roots, blocks } = CAR.decode(bytes) as unknown as { roots: Block[]; blocks: Map<string, Block> });
  } catch (error) {
    return fail(`UCAN artifact is not a ucanto archive (${message(error)})`);
  }
  if (roots.length !== 1) fail('UCAN archive must name exactly one root block');
  // The variant block and one block per delegation; a CAR section repeated under the same CID counts once in the map,
  // but the CAR's length bounds how many there were, and only the linked ones are read.
  if (blocks.size > MAX_CHAIN_LENGTH + 1) fail(`UCAN proof chain longer than ${MAX_CHAIN_LENGTH} delegations`);
  for (const block of blocks.values()) checkBlock(block);
  const root = Delegation.create({ root: linkedUcan(decodeCbor(roots[0]!), blocks) as never, blocks: blocks as never });
  // Depth first from the root: each block is linked once (a tree), so the walk visits each block once. The
  // views decode each block once (ucanto caches a decoding by its bytes), for this check and all later ones.
  const linked = new Set<string>([root.cid.toString()]);
  const pending: DelegationView[] = [root];
  while (pending.length > 0) {
    const delegation = pending.pop()!;
    checkCanonical(delegation);
    for (const proof of delegation.proofs) {
      if (!isDelegation(proof)) return fail(`proof ${proof} is not included in the archive`);
      const id = proof.cid.toString();
      if (linked.has(id)) fail(`proof ${id} is linked more than once in the chain`);
      linked.add(id);
      if (linked.size > MAX_CHAIN_LENGTH) fail(`UCAN proof chain longer than ${MAX_CHAIN_LENGTH} delegations`);
      pending.push(proof);
    }
  }
  if (linked.size + 1 !== blocks.size) fail('UCAN archive carries blocks outside its proof chain');
  return root;
}

/**
 * The block that the variant `{ "ucan@0.9.1": <link> }` links, among the archive's checked blocks. Anything else
 * there (bytes, a map shaped like a CID, an identity CID that embeds its block) names no block of the archive.
 */
function linkedUcan(variant: unknown, blocks: Map<string, Block>): Block {
  const fields = variant && typeof variant === 'object' ? Object.keys(variant) : [];
  const link = fields.length === 1 ? (variant as Record<string, unknown>)['ucan@0.9.1'] : undefined;
  if (!isLink(link)) fail('UCAN archive root is not { "ucan@0.9.1": <link> }');
  const id = String(link);
  const block = blocks.get(id);
  if (!block) fail(`UCAN ${id} is not included in the archive`);
  return block;
}

/** A block whose CID is CIDv1, DAG-CBOR, sha2-256 of exactly its bytes. */
function checkBlock({ cid, bytes }: Block): void {
  if (cid.version !== 1 || cid.code !== DAG_CBOR || cid.multihash.code !== SHA2_256) {
    fail(`UCAN archive block ${cid} is not DAG-CBOR under a sha2-256 CIDv1`);
  }
  const digest = createHash('sha256').update(bytes).digest();
  if (!digest.equals(cid.multihash.digest)) fail(`UCAN archive block ${cid} does not match its CID`);
}

/** A UCAN whose block is dag-ucan's own DAG-CBOR encoding of it. */
function checkCanonical(delegation: DelegationView): void {
  const { cid, bytes } = delegation.root;
  let encoded: Uint8Array;
  try {
    const ucan = delegation.data;
    if ('jwt' in ucan.model && ucan.model.jwt) fail(`UCAN ${cid} is in the JWT form; send its DAG-CBOR form`);
    encoded = UCAN.encode(ucan);
  } catch (error) {
    if (error instanceof AuthFailure) throw error;
    return fail(`UCAN ${cid} cannot be decoded (${message(error)})`);
  }
  if (!Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength).equals(bytes)) {
    fail(`UCAN ${cid} is not in canonical DAG-CBOR (as dag-ucan encodes it)`);
  }
}

function decodeCbor(block: Block): unknown {
  try {
    return CBOR.decode(block.bytes as never);
  } catch (error) {
    return fail(`UCAN archive root cannot be decoded (${message(error)})`);
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
