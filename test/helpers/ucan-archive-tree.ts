// A ucanto archive as a tree of decoded blocks (the variant root, the UCAN, its proofs), rebuilt into an archive
// after one value somewhere in it is replaced: each block is re-encoded and every link above it re-pointed, so a
// replaced value deep in a proof reaches the server's reader of that proof instead of breaking the chain first.
import { CAR, CBOR, isDelegation } from '@ucanto/core';
import type { Delegation } from '@ucanto/interface';
import { cidOf, CborFloat, CborTag, encodeCbor, type RawBlock } from './ucan-mutations.js';

/** The CBOR types a value can have (`tag` includes a CID, tag 42). */
export const CBOR_KINDS = [
  'map',
  'array',
  'bytes',
  'text',
  'int',
  'negative',
  'float',
  'bool',
  'null',
  'undefined',
  'tag',
] as const;
export type CborKind = (typeof CBOR_KINDS)[number];

export interface UcanTree {
  /** The UCAN block as decoded (CIDs as CID objects, bytes as Uint8Array). */
  fields: Record<string, unknown>;
  proofs: UcanTree[];
}

/** Where a value sits: in the variant root or a UCAN block (by proof indexes from the root UCAN), and its path. */
export interface Position {
  block: 'variant' | number[];
  path: Array<string | number>;
  /** What is there now; `absent` for an optional UCAN field not written. */
  kind: CborKind | 'absent';
}

export interface Replacement {
  at: Position;
  value: unknown;
}

/** dag-ucan's optional fields, written only when set: a value of any type there is one more input. */
const OPTIONAL_FIELDS = ['fct', 'nbf', 'nnc'];

export function treeOf(delegation: Delegation): UcanTree {
  return {
    fields: CBOR.decode(delegation.root.bytes as never) as Record<string, unknown>,
    proofs: delegation.proofs.filter(isDelegation).map(treeOf),
  };
}

export function kindOf(value: unknown): CborKind {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (typeof value === 'number' && !Number.isInteger(value)) return 'float';
    return value < 0 ? 'negative' : 'int';
  }
  if (value instanceof CborFloat) return 'float';
  if (value instanceof CborTag || (value as { asCID?: unknown }).asCID) return 'tag';
  if (value instanceof Uint8Array) return 'bytes';
  return Array.isArray(value) ? 'array' : 'map';
}

/** Every value of every block (each block itself included, at path []), and the UCANs' unwritten optional fields. */
export function positionsOf(tree: UcanTree): Position[] {
  const positions: Position[] = [];
  const walk = (block: Position['block'], path: Position['path'], value: unknown) => {
    const kind = kindOf(value);
    positions.push({ block, path, kind });
    if (kind === 'array') for (const [i, item] of (value as unknown[]).entries()) walk(block, [...path, i], item);
    if (kind === 'map')
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) walk(block, [...path, key], item);
  };
  positions.push({ block: 'variant', path: [], kind: 'map' }, { block: 'variant', path: ['ucan@0.9.1'], kind: 'tag' });
  const visit = (node: UcanTree, at: number[]) => {
    walk(at, [], node.fields);
    for (const field of OPTIONAL_FIELDS)
      if (!(field in node.fields)) positions.push({ block: at, path: [field], kind: 'absent' });
    for (const [i, proof] of node.proofs.entries()) visit(proof, [...at, i]);
  };
  visit(tree, []);
  return positions;
}

/** Standard base64 of the archive of `tree`, with `replacement` applied; byte for byte ucanto's when none. */
export function archiveOfTree(tree: UcanTree, replacement?: Replacement): string {
  const blocks: RawBlock[] = [];
  const here = (block: Position['block']) =>
    replacement !== undefined && String(replacement.at.block) === String(block) ? replacement : undefined;
  const build = (node: UcanTree, at: number[]): unknown => {
    const links = node.proofs.map((proof, i) => build(proof, [...at, i]));
    const block = blockOf(replaced({ ...node.fields, prf: links }, here(at)));
    blocks.push(block);
    return block.cid;
  };
  const root = build(tree, []);
  const variant = blockOf(replaced({ 'ucan@0.9.1': root }, here('variant')));
  // ucanto writes the variant last, after the UCAN blocks (depth first, proofs before the UCAN above them).
  const store = new Map([...blocks, variant].map((block) => [`${block.cid}`, block]));
  return Buffer.from(CAR.encode({ roots: [variant as never], blocks: store as never })).toString('base64');
}

function blockOf(value: unknown): RawBlock {
  const bytes = encodeCbor(value);
  return { cid: cidOf(bytes), bytes };
}

/** `value` with the item at `replacement.at.path` replaced (a copy along the path; the tree stays as it was). */
function replaced(value: unknown, replacement: Replacement | undefined, depth = 0): unknown {
  if (!replacement) return value;
  const { path } = replacement.at;
  if (depth === path.length) return replacement.value;
  const key = path[depth]!;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[key] = replaced(copy[key], replacement, depth + 1);
  return copy;
}
