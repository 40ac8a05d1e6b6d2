// Thread: main, hand-written for the hot path (cold UCAN verification)
// A reader of the few canonical DAG-CBOR
// items a common UCAN holds. It accepts only the shortest encoding of each head and definite lengths, a strict
// subset of what @ipld/dag-cbor accepts; anything else is out of shape (ucanto's path decides it).
import { outOfShape, startsWith } from './shape.js';

export const MAJOR = { uint: 0, bytes: 2, text: 3, array: 4, map: 5 } as const;

export class CborReader {
  pos = 0;

  constructor(readonly bytes: Uint8Array) {}

  get done(): boolean {
    return this.pos === this.bytes.length;
  }

  /** The argument of the next head, which must be of `major` and encoded in its shortest form. */
  head(major: number): number {
    const first = this.#byte();
    if (first >> 5 !== major) outOfShape(`CBOR major type ${first >> 5} where ${major} was expected`);
    const info = first & 0x1f;
    if (info < 24) return info;
    let value: number;
    let least: number;
    if (info === 24) [value, least] = [this.#byte(), 24];
    else if (info === 25) [value, least] = [this.#uint(2), 0x100];
    else if (info === 26) [value, least] = [this.#uint(4), 0x10000];
    else if (info === 27) [value, least] = [this.#uint(8), 0x100000000];
    else return outOfShape(`CBOR head with additional information ${info}`);
    if (value < least) outOfShape('CBOR head not in its shortest form');
    return value;
  }

  /** The next `length` bytes, as a view. */
  take(length: number): Uint8Array {
    if (this.pos + length > this.bytes.length) outOfShape('CBOR item runs past the end');
    const view = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return view;
  }

  /** A byte string, as a view. */
  byteString(): Uint8Array {
    return this.take(this.head(MAJOR.bytes));
  }

  /** Consumes the text string `expected` (ASCII) if it comes next; false (nothing consumed) otherwise. */
  skipText(expected: Uint8Array): boolean {
    const header = 0x60 | expected.length;
    if (expected.length >= 24 || this.bytes[this.pos] !== header || !startsWith(this.bytes, this.pos + 1, expected))
      return false;
    this.pos += 1 + expected.length;
    return true;
  }

  /** The text string that comes next, which must be printable ASCII (so its UTF-8 and JSON forms are plain). */
  printableText(): string {
    const bytes = this.take(this.head(MAJOR.text));
    for (const byte of bytes) if (byte < 0x20 || byte > 0x7e) outOfShape('text outside printable ASCII');
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  }

  #byte(): number {
    if (this.pos >= this.bytes.length) outOfShape('CBOR item runs past the end');
    return this.bytes[this.pos++]!;
  }

  /** A big-endian unsigned integer of `size` bytes; above 2^53 - 1 is out of shape (dag-cbor reads a BigInt). */
  #uint(size: number): number {
    const bytes = this.take(size);
    let value = 0;
    for (const byte of bytes) value = value * 256 + byte;
    if (!Number.isSafeInteger(value)) outOfShape('integer beyond 2^53 - 1');
    return value;
  }
}
