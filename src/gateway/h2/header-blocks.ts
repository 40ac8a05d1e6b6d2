// Main thread (the gateway's HTTP/2 client). The node's header blocks: a HEADERS frame and its CONTINUATIONs put
// together, decoded with the connection's one HPACK table, as a record per stream.
import { ConnectionError, ErrorCode, Flag, unpad } from './frames.js';
import { HpackDecoder, HpackError, type HeaderField } from './hpack.js';
import type { ResponseHeaders } from './unary-call.js';

/** The largest header block taken from the node (announced as SETTINGS_MAX_HEADER_LIST_SIZE). */
export const MAX_HEADER_BLOCK = 256 * 1024;
const HEADER_TABLE_SIZE = 4096;

/** A whole header block of one stream. */
export interface HeaderBlock {
  readonly streamId: number;
  readonly endStream: boolean;
  readonly headers: ResponseHeaders;
}

export class HeaderBlocks {
  readonly #decoder = new HpackDecoder(HEADER_TABLE_SIZE);
  /** A header block spread over HEADERS + CONTINUATION frames, until END_HEADERS. */
  #partial?: { streamId: number; endStream: boolean; parts: Buffer[]; length: number };

  /** A block is open: only its CONTINUATION may come next. */
  get open(): boolean {
    return this.#partial !== undefined;
  }

  /** A HEADERS frame: its block when END_HEADERS closes it, else undefined (CONTINUATION frames follow). */
  headers(flags: number, streamId: number, payload: Buffer): HeaderBlock | undefined {
    let block = unpad(payload, flags);
    if (flags & Flag.PRIORITY) {
      if (block.length < 5) throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS too short for its priority');
      block = block.subarray(5);
    }
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if (flags & Flag.END_HEADERS) return this.#decode(streamId, endStream, block);
    this.#partial = { streamId, endStream, parts: [block], length: block.length };
    return undefined;
  }

  /** A CONTINUATION frame: the block when END_HEADERS closes it, else undefined. */
  continuation(flags: number, streamId: number, payload: Buffer): HeaderBlock | undefined {
    const partial = this.#partial;
    if (!partial || partial.streamId !== streamId) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without its HEADERS');
    partial.parts.push(payload);
    partial.length += payload.length;
    if (partial.length > MAX_HEADER_BLOCK) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'header block too large');
    if (!(flags & Flag.END_HEADERS)) return undefined;
    this.#partial = undefined;
    return this.#decode(streamId, partial.endStream, Buffer.concat(partial.parts, partial.length));
  }

  // Decoded even for a stream the connection forgot: the table is shared by the whole connection.
  #decode(streamId: number, endStream: boolean, block: Buffer): HeaderBlock {
    let fields: HeaderField[];
    try {
      fields = this.#decoder.decode(block, MAX_HEADER_BLOCK);
    } catch (error) {
      if (error instanceof HpackError) throw new ConnectionError(ErrorCode.COMPRESSION_ERROR, error.message);
      throw error;
    }
    return { streamId, endStream, headers: headersOf(fields) };
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
