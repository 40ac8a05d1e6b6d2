// Main thread (the gateway's HTTP/2 client). A header block spread over HEADERS + CONTINUATION frames, bounded as
// nghttp2 bounds it (since CVE-2024-27316): a block of at most MAX_HEADER_BLOCK bytes in at most MAX_CONTINUATIONS
// CONTINUATION frames, so a node sending empty CONTINUATIONs forever is dropped at once, not buffered.
import { ConnectionError, ErrorCode } from './frames.js';

/** Our SETTINGS_MAX_HEADER_LIST_SIZE, the bound of one block's bytes and of its decoded list. */
export const MAX_HEADER_BLOCK = 256 * 1024;
/** nghttp2's default (nghttp2_option_set_max_continuations). */
export const MAX_CONTINUATIONS = 8;

export class PartialHeaderBlock {
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
    if (++this.#continuations > MAX_CONTINUATIONS) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, `header block in more than ${MAX_CONTINUATIONS} CONTINUATION frames`);
    this.#length += payload.length;
    if (this.#length > MAX_HEADER_BLOCK) throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'header block too large');
    this.#parts.push(payload);
  }

  get block(): Buffer {
    return Buffer.concat(this.#parts, this.#length);
  }
}
