// Thread: main (the gateway's HTTP/2 client)
// A request's header block, in parts sent as they are: the fields
// every call of a connection sends, encoded once, with the call's `:path` and metadata.
import { encodeFields, fieldEncoder } from './hpack.js';

/** `:path` fields encoded once per path (the gateway's routes are a bounded set). */
const pathField = fieldEncoder(':path', 4096);
const REGULAR_FIELDS = encodeFields([
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
]);

export class RequestHeaders {
  /** The pseudo-headers before `:path`. */
  readonly #pseudo: Buffer;

  constructor(tls: boolean, authority: string) {
    this.#pseudo = encodeFields([
      [':method', 'POST'],
      [':scheme', tls ? 'https' : 'http'],
      [':authority', authority],
    ]);
  }

  block(path: string, metadataBlock: Buffer): Buffer[] {
    return [this.#pseudo, pathField(path), REGULAR_FIELDS, metadataBlock];
  }
}
