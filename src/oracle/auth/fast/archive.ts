// Thread: main, hand-written for the hot path (cold UCAN verification)
// Reads a ucanto archive of the common
// shape, the CARv1 that ucanto writes for a UCAN without proofs: a header naming one root, the UCAN's DAG-CBOR
// block, and the root block `{ 'ucan@0.9.1': <link to the UCAN> }`. Anything else is out of shape.
import { hash } from 'node:crypto';
import { ascii, outOfShape, startsWith } from './shape.js';

/** CIDv1, dag-cbor (0x71), sha2-256 (0x12), 32-byte digest: the prefix of every CID in the shape. */
const CID_PREFIX = Uint8Array.of(0x01, 0x71, 0x12, 0x20);
const CID_LENGTH = CID_PREFIX.length + 32;
/** A CID inside DAG-CBOR: tag 42, a byte string of 37 bytes, the identity multibase prefix 0x00. */
const CBOR_LINK = Uint8Array.of(0xd8, 0x2a, 0x58, CID_LENGTH + 1, 0x00, ...CID_PREFIX);
/** `{ roots: [<link>], version: 1 }`, keys in DAG-CBOR order. */
const HEADER_START = Uint8Array.of(0xa2, 0x65, ...ascii('roots'), 0x81, ...CBOR_LINK);
const HEADER_END = Uint8Array.of(0x67, ...ascii('version'), 0x01);
const HEADER_LENGTH = HEADER_START.length + 32 + HEADER_END.length;
/** `{ 'ucan@0.9.1': <link> }`: ucanto's archive variant (ArchiveSchema). */
const VARIANT_START = Uint8Array.of(0xa1, 0x6a, ...ascii('ucan@0.9.1'), ...CBOR_LINK);
const VARIANT_LENGTH = VARIANT_START.length + 32;

export interface ArchivedUcan {
  /** The UCAN block's CID (binary), as the archive names it. */
  cid: Uint8Array;
  /** The UCAN block: DAG-CBOR. */
  block: Uint8Array;
}

/** The UCAN inside an archive of the common shape; its block's sha2-256 must match the CID (else out of shape). */
export function readArchive(car: Uint8Array): ArchivedUcan {
  let pos = 0;
  const varint = (): number => {
    // Shortest LEB128 of at most three bytes: a CAR section here is far below 2 MiB.
    let value = 0;
    for (let shift = 0; shift < 21; shift += 7) {
      const byte = car[pos++];
      if (byte === undefined) outOfShape('CAR varint runs past the end');
      value |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        if (byte === 0 && shift > 0) outOfShape('CAR varint not in its shortest form');
        return value;
      }
    }
    return outOfShape('CAR varint too long');
  };
  if (
    varint() !== HEADER_LENGTH ||
    !startsWith(car, pos, HEADER_START) ||
    !startsWith(car, pos + HEADER_START.length + 32, HEADER_END)
  ) {
    outOfShape('CAR header other than one root, version 1');
  }
  const root = car.subarray(pos + HEADER_START.length, pos + HEADER_START.length + 32);
  pos += HEADER_LENGTH;
  const blocks: Array<{ digest: Uint8Array; cid: Uint8Array; data: Uint8Array }> = [];
  while (pos < car.length) {
    if (blocks.length === 2) outOfShape('CAR with more than two blocks');
    const length = varint();
    if (length < CID_LENGTH || pos + length > car.length || !startsWith(car, pos, CID_PREFIX))
      outOfShape('CAR block other than dag-cbor, sha2-256');
    const cid = car.subarray(pos, pos + CID_LENGTH);
    blocks.push({ cid, digest: cid.subarray(CID_PREFIX.length), data: car.subarray(pos + CID_LENGTH, pos + length) });
    pos += length;
  }
  const variantAt = blocks.findIndex((block) => equal(block.digest, root));
  const variant = blocks[variantAt];
  const ucan = blocks[1 - variantAt];
  if (blocks.length !== 2 || !variant || !ucan) outOfShape('CAR other than a root block and one UCAN block');
  if (variant.data.length !== VARIANT_LENGTH || !startsWith(variant.data, 0, VARIANT_START))
    outOfShape('root block other than ucan@0.9.1');
  if (!equal(variant.data.subarray(VARIANT_START.length), ucan.digest) || equal(ucan.digest, root))
    outOfShape('root block does not link the UCAN block');
  if (!equal(hash('sha256', ucan.data, 'buffer'), ucan.digest)) outOfShape('UCAN block does not match its CID');
  return { cid: ucan.cid, block: ucan.data };
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && startsWith(a, 0, b);
}
