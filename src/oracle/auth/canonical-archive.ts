// The ucanto path's reader of an artifact: a ucanto archive (CARv1) accepted only in the one encoding ucanto
// itself writes, so that a delegation has one set of bytes and one CID. Every block must be DAG-CBOR under a
// CIDv1 sha2-256 that matches its bytes; every UCAN block must be exactly what dag-ucan encodes for it (keys in
// order, integers as integers, no optional field written empty, no unknown field, not the JWT form). The proofs
// form a tree of at most MAX_CHAIN_LENGTH delegations, each carried in the archive and linked once, so nothing
// later (access(), archive() when minting for a user) walks more paths than there are blocks.
import { createHash } from 'node:crypto';
import { CAR, CBOR, Delegation, UCAN } from '@ucanto/core';
import type { Delegation as DelegationView } from '@ucanto/interface';
import { fail } from './failure.js';

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
  const variant = decodeCbor(roots[0]!);
  const ucanLink = variant && typeof variant === 'object' ? (variant as Record<string, unknown>)['ucan@0.9.1'] : undefined;
  const keys = variant && typeof variant === 'object' ? Object.keys(variant) : [];
  if (keys.length !== 1 || !ucanLink) fail('UCAN archive root is not { "ucan@0.9.1": <link> }');
  const root = `${ucanLink as object}`;

  // Depth first from the root: each block is linked once (a tree), so the walk visits each block once.
  const linked = new Set<string>([root]);
  const pending = [root];
  while (pending.length > 0) {
    const cid = pending.pop()!;
    const block = blocks.get(cid);
    if (!block) fail(`proof ${cid} is not included in the archive`);
    for (const proof of canonicalUcan(block).proofs) {
      const id = proof.toString();
      if (linked.has(id)) fail(`proof ${id} is linked more than once in the chain`);
      linked.add(id);
      if (linked.size > MAX_CHAIN_LENGTH) fail(`UCAN proof chain longer than ${MAX_CHAIN_LENGTH} delegations`);
      pending.push(id);
    }
  }
  if (linked.size + 1 !== blocks.size) fail('UCAN archive carries blocks outside its proof chain');
  return Delegation.view({ root: (ucanLink as never), blocks: blocks as never });
}

/** A block whose CID is CIDv1, DAG-CBOR, sha2-256 of exactly its bytes. */
function checkBlock({ cid, bytes }: Block): void {
  if (cid.version !== 1 || cid.code !== DAG_CBOR || cid.multihash.code !== SHA2_256) {
    fail(`UCAN archive block ${cid} is not DAG-CBOR under a sha2-256 CIDv1`);
  }
  const digest = createHash('sha256').update(bytes).digest();
  if (!digest.equals(cid.multihash.digest)) fail(`UCAN archive block ${cid} does not match its CID`);
}

/** The UCAN of a block, which must be in dag-ucan's own DAG-CBOR encoding of it. */
function canonicalUcan(block: Block): { proofs: readonly { toString(): string }[] } {
  let ucan: ReturnType<typeof UCAN.decode>;
  let encoded: Uint8Array;
  try {
    ucan = UCAN.decode(block.bytes);
    encoded = UCAN.encode(ucan);
  } catch (error) {
    return fail(`UCAN ${block.cid} cannot be decoded (${message(error)})`);
  }
  if ('jwt' in ucan.model && ucan.model.jwt) fail(`UCAN ${block.cid} is in the JWT form; send its DAG-CBOR form`);
  if (!Buffer.from(encoded).equals(block.bytes)) fail(`UCAN ${block.cid} is not in canonical DAG-CBOR (as dag-ucan encodes it)`);
  return ucan;
}

function decodeCbor(block: Block): unknown {
  try {
    return CBOR.decode(block.bytes as never);
  } catch (error) {
    return fail(`UCAN archive root cannot be decoded (${message(error)})`);
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
