// Thread: main (the gateway's HTTP/2 client)
// HPACK (RFC 7541), hand-written for the hot path: every response's
// headers and trailers are decoded here. The npm `hpack.js` is a stream Transform per block and unmaintained since
// 2016; node's own HPACK is not exposed. The decoder is complete (Huffman, dynamic table, size updates) because
// real servers (grpc-go, grpc-js via nghttp2) use all of it; the encoder only sends static-table indexes and
// literals without indexing, so the peer's table never has to be tracked.
import { huffmanDecode } from './huffman.js';
import { BoundedMap } from '../../base/bounded-map.js';

/** One decoded field: name (lower case, as HTTP/2 requires) and value, both Latin-1 as on the wire. */
export type HeaderField = [name: string, value: string];

/** RFC 7541 Appendix A. */
export const STATIC_TABLE: readonly HeaderField[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = STATIC_TABLE.length;
/** An entry's size in the dynamic table: its octets plus 32 (RFC 7541 section 4.1). */
const ENTRY_OVERHEAD = 32;

export class HpackError extends Error {
  override name = 'HpackError';
}

/**
 * Decodes header blocks of one connection, in order. `maxTableSize` is the SETTINGS_HEADER_TABLE_SIZE this end
 * announced (the peer may lower the table with size updates, never raise it past that).
 */
export class HpackDecoder {
  readonly #limit: number;
  #capacity: number;
  #size = 0;
  /** Newest last: dynamic index 1 is the last element. */
  readonly #entries: HeaderField[] = [];

  constructor(maxTableSize = 4096) {
    this.#limit = maxTableSize;
    this.#capacity = maxTableSize;
  }

  /** The dynamic table's size in octets, as RFC 7541 counts it. */
  get tableSize(): number {
    return this.#size;
  }

  /** The dynamic table, newest first. */
  get table(): HeaderField[] {
    return this.#entries.slice().reverse();
  }

  /** The fields of one complete header block; throws HpackError (a COMPRESSION_ERROR of the connection). */
  decode(block: Uint8Array, maxListSize = Infinity): HeaderField[] {
    const fields: HeaderField[] = [];
    let listSize = 0;
    let at = 0;
    let fieldsSeen = false;
    const end = block.length;
    const integer = (prefixBits: number): number => {
      const mask = (1 << prefixBits) - 1;
      let value = block[at++] & mask;
      if (value < mask) return value;
      let shift = 0;
      for (;;) {
        if (at >= end) throw new HpackError('HPACK: truncated integer');
        const byte = block[at++];
        value += (byte & 0x7f) * 2 ** shift;
        shift += 7;
        if (value > 0x7fffffff) throw new HpackError('HPACK: integer overflow');
        if ((byte & 0x80) === 0) return value;
      }
    };
    const string = (): string => {
      if (at >= end) throw new HpackError('HPACK: truncated string');
      const huffman = block[at] & 0x80;
      const length = integer(7);
      if (at + length > end) throw new HpackError('HPACK: truncated string');
      const start = at;
      at += length;
      if (huffman) {
        try {
          return huffmanDecode(block, start, at);
        } catch (error) {
          throw new HpackError((error as Error).message);
        }
      }
      return latin1(block, start, at);
    };
    while (at < end) {
      const byte = block[at];
      let field: HeaderField;
      if (byte & 0x80) {
        // Indexed field.
        field = this.#field(integer(7));
      } else if (byte & 0x40) {
        // Literal with incremental indexing.
        const index = integer(6);
        const name = index === 0 ? string() : this.#field(index)[0];
        field = [name, string()];
        this.#insert(field);
      } else if (byte & 0x20) {
        // Dynamic table size update: only before the first field of a block.
        if (fieldsSeen) throw new HpackError('HPACK: table size update after a field');
        const capacity = integer(5);
        if (capacity > this.#limit)
          throw new HpackError(`HPACK: table size update to ${capacity} exceeds ${this.#limit}`);
        this.#capacity = capacity;
        this.#evict(0);
        continue;
      } else {
        // Literal without indexing (0000) or never indexed (0001).
        const index = integer(4);
        const name = index === 0 ? string() : this.#field(index)[0];
        field = [name, string()];
      }
      fieldsSeen = true;
      listSize += field[0].length + field[1].length + ENTRY_OVERHEAD;
      if (listSize > maxListSize) throw new HpackError(`HPACK: header list larger than ${maxListSize} octets`);
      fields.push(field);
    }
    return fields;
  }

  #field(index: number): HeaderField {
    if (index === 0) throw new HpackError('HPACK: index 0');
    if (index <= STATIC_COUNT) return STATIC_TABLE[index - 1];
    const dynamic = index - STATIC_COUNT;
    if (dynamic > this.#entries.length) throw new HpackError(`HPACK: index ${index} past the table`);
    return this.#entries[this.#entries.length - dynamic];
  }

  #insert(field: HeaderField): void {
    const size = field[0].length + field[1].length + ENTRY_OVERHEAD;
    // An entry larger than the table empties it and is not added (RFC 7541 section 4.4).
    this.#evict(size);
    if (size > this.#capacity) return;
    this.#entries.push(field);
    this.#size += size;
  }

  /** Drops the oldest entries until `room` octets fit. */
  #evict(room: number): void {
    let drop = 0;
    while (this.#size + room > this.#capacity && drop < this.#entries.length) {
      const [name, value] = this.#entries[drop++];
      this.#size -= name.length + value.length + ENTRY_OVERHEAD;
    }
    if (drop) this.#entries.splice(0, drop);
  }
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  // Short strings: fromCharCode beats a Buffer view plus toString for the usual header lengths.
  if (end - start < 32) {
    let text = '';
    for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i]);
    return text;
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
}

/** Static-table index of a name (the first entry with it), for literals with an indexed name. */
const STATIC_NAME_INDEX = new Map<string, number>();
/** Static-table index of a whole field, keyed `name\0value`. */
const STATIC_FIELD_INDEX = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, i + 1);
  if (value) STATIC_FIELD_INDEX.set(`${name}\0${value}`, i + 1);
});

/**
 * A header block of the given fields (names must be lower case): a static-table index where the whole field is
 * there, else a literal without indexing (with an indexed name when the static table has it). Never touches the
 * peer's dynamic table, so blocks can be cached and concatenated freely.
 */
export function encodeFields(fields: readonly HeaderField[]): Buffer {
  const parts: number[] = [];
  for (const [name, value] of fields) {
    const whole = STATIC_FIELD_INDEX.get(`${name}\0${value}`);
    if (whole !== undefined) {
      pushInteger(parts, whole, 7, 0x80);
      continue;
    }
    const nameIndex = STATIC_NAME_INDEX.get(name);
    if (nameIndex !== undefined) {
      pushInteger(parts, nameIndex, 4, 0x00);
    } else {
      parts.push(0x00);
      pushString(parts, name);
    }
    pushString(parts, value);
  }
  return Buffer.from(parts);
}

/** A bounded memo of one field's encoding by value, for values that repeat (`:path` per route, `grpc-timeout`). */
export function fieldEncoder(name: string, limit: number): (value: string) => Buffer {
  const encoded = new BoundedMap<string, Buffer>(limit);
  return (value) => {
    let field = encoded.get(value);
    if (!field) {
      field = encodeFields([[name, value]]);
      encoded.set(value, field);
    }
    return field;
  };
}

function pushInteger(parts: number[], value: number, prefixBits: number, pattern: number): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    parts.push(pattern | value);
    return;
  }
  parts.push(pattern | max);
  value -= max;
  while (value >= 0x80) {
    parts.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  parts.push(value);
}

function pushString(parts: number[], text: string): void {
  // Raw octets (no Huffman): header values here are short and the encoder runs per call.
  pushInteger(parts, text.length, 7, 0x00);
  for (let i = 0; i < text.length; i++) parts.push(text.charCodeAt(i) & 0xff);
}
