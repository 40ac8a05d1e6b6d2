// Thread: main (the gateway's HTTP/2 client)
// A header block spread over HEADERS + CONTINUATION frames, bounded as
// nghttp2 bounds it (since CVE-2024-27316): a block of at most MAX_HEADER_BLOCK bytes in at most MAX_CONTINUATIONS
// CONTINUATION frames, so a node sending empty CONTINUATIONs forever is dropped at once, not buffered.
import { ConnectionError, ErrorCode, Flag, unpad } from './frames.js';
import { HpackDecoder, HpackError, type HeaderField } from './hpack.js';
import type { ResponseHeaders } from './unary-call.js';

/** Our SETTINGS_MAX_HEADER_LIST_SIZE, the bound of one block's bytes and of its decoded list. */
export const MAX_HEADER_BLOCK = 256 * 1024;
/** nghttp2's default (nghttp2_option_set_max_continuations). */
export const MAX_CONTINUATIONS = 8;

const HEADER_TABLE_SIZE = 4096;

/** A complete header block of a stream, decoded. */
export interface HeaderBlock {
  streamId: number;
  endStream: boolean;
  headers: ResponseHeaders;
}

/** The header blocks of one connection: HEADERS + CONTINUATION frames in, decoded blocks out (HPACK state shared). */
export class HeaderBlockReader {
  readonly #decoder = new HpackDecoder(HEADER_TABLE_SIZE);
  #partial?: PartialHeaderBlock;

  /** A block is open: only its CONTINUATION frames may come next. */
  get pending(): boolean {
    return this.#partial !== undefined;
  }

  /** A HEADERS frame: its block, or undefined while CONTINUATIONs are to follow. */
  headers(flags: number, streamId: number, payload: Buffer): HeaderBlock | undefined {
    let block = unpad(payload, flags);
    if (flags & Flag.PRIORITY) {
      if (block.length < 5) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS too short for its priority');
      block = block.subarray(5);
    }
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if (flags & Flag.END_HEADERS) return this.#decode(streamId, endStream, block);
    if (block.length > MAX_HEADER_BLOCK)
      throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'header block too large');
    this.#partial = new PartialHeaderBlock(streamId, endStream, block);
    return undefined;
  }

  continuation(flags: number, streamId: number, payload: Buffer): HeaderBlock | undefined {
    const partial = this.#partial;
    if (!partial || partial.streamId !== streamId)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without its HEADERS');
    partial.add(payload);
    if (!(flags & Flag.END_HEADERS)) return undefined;
    this.#partial = undefined;
    return this.#decode(streamId, partial.endStream, partial.block);
  }

  #decode(streamId: number, endStream: boolean, block: Buffer): HeaderBlock {
    try {
      // Decoded even for a stream forgotten by the connection: the table is shared by the whole connection.
      return { streamId, endStream, headers: headersOf(this.#decoder.decode(block, MAX_HEADER_BLOCK)) };
    } catch (error) {
      if (error instanceof HpackError) throw new ConnectionError(ErrorCode.COMPRESSION_ERROR, error.message);
      throw error;
    }
  }
}

/** Header fields as a record; a repeated name's values are joined with ", " (as node's http2 does for most). */
function headersOf(fields: HeaderField[]): ResponseHeaders {
  const headers: ResponseHeaders = {};
  for (const [name, value] of fields) {
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  }
  return headers;
}

class PartialHeaderBlock {
  readonly #parts: Buffer[];
  #length: number;
  #continuations = 0;

  constructor(
    readonly streamId: number,
    readonly endStream: boolean,
    first: Buffer,
  ) {
    this.#parts = [first];
    this.#length = first.length;
  }

  /** Adds a CONTINUATION's payload; throws ENHANCE_YOUR_CALM past the bounds. */
  add(payload: Buffer): void {
    if (++this.#continuations > MAX_CONTINUATIONS)
      throw new ConnectionError(
        ErrorCode.ENHANCE_YOUR_CALM,
        `header block in more than ${MAX_CONTINUATIONS} CONTINUATION frames`,
      );
    this.#length += payload.length;
    if (this.#length > MAX_HEADER_BLOCK)
      throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'header block too large');
    this.#parts.push(payload);
  }

  get block(): Buffer {
    return Buffer.concat(this.#parts, this.#length);
  }
}
