// Thread: main (the gateway's HTTP/2 client)
// One unary gRPC call's state and how its answer becomes a gRPC status
// (gRPC over HTTP/2, PROTOCOL-HTTP2.md; codes mapped as grpc-js maps them). Hand-written: the hot path of every query.
import { status as GrpcStatus } from '@grpc/grpc-js';

/** Response headers or trailers: lower-case names; a repeated name's values joined with ", ". */
export type ResponseHeaders = Record<string, string>;

/** What one call answered: the message bytes on OK, the gRPC status either way, response metadata as received. */
export interface H2Outcome {
  code: number;
  details: string;
  bytes?: Buffer;
  /** The response headers, then the trailers (lower-case names). */
  headers?: ResponseHeaders;
  trailers?: ResponseHeaders;
  /** The answer's message was larger than the call's limit (RESOURCE_EXHAUSTED, found by its length prefix). */
  tooLarge?: boolean;
}

/** HTTP status -> gRPC code when a response is not gRPC at all (the table of grpc-js and the spec's doc). */
export function codeOfHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.UNAVAILABLE;
    default:
      return GrpcStatus.UNKNOWN;
  }
}

/** RST_STREAM codes as grpc-js reports them. */
export function codeOfReset(rstCode: number): number {
  switch (rstCode) {
    case 7:
      return GrpcStatus.UNAVAILABLE; // REFUSED_STREAM
    case 8:
      return GrpcStatus.CANCELLED; // CANCEL
    case 11:
      return GrpcStatus.RESOURCE_EXHAUSTED; // ENHANCE_YOUR_CALM
    default:
      return GrpcStatus.INTERNAL;
  }
}

function decodeMessage(text: string | undefined): string {
  if (!text) return '';
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The 5-byte prefix (uncompressed, big-endian length) and the message. */
export function grpcFrame(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(5 + message.byteLength);
  framed[0] = 0;
  framed.writeUInt32BE(message.byteLength, 1);
  framed.set(message, 5);
  return framed;
}

/** The one message of a unary answer. */
function readMessage(body: Buffer): H2Outcome {
  if (body.length < 5) return { code: GrpcStatus.UNIMPLEMENTED, details: 'No message received' };
  // Nothing is compressed: this client sends no grpc-accept-encoding, so a compressed frame is the node's error.
  if (body[0] !== 0)
    return { code: GrpcStatus.INTERNAL, details: 'Received a compressed message without grpc-accept-encoding' };
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length)
    return {
      code: GrpcStatus.INTERNAL,
      details: body.length < 5 + length ? 'Truncated message' : 'Received more than one message on a unary call',
    };
  return { code: GrpcStatus.OK, details: 'OK', bytes: body.subarray(5) };
}

const NOTHING = Buffer.alloc(0);

/**
 * One call from request to status. The connection fills in the stream fields; the channel owns the deadline.
 * Once settled, later frames for it are ignored.
 */
export class UnaryCall {
  /** The stream's id once it has one (0 while queued). */
  id = 0;
  headers?: ResponseHeaders;
  trailers?: ResponseHeaders;
  settled = false;
  /** The connection's cancel for this call, set while it has a stream. */
  cancel?: () => void;
  /** Sent again on a new connection once when a GOAWAY says the node never saw it. */
  retried = false;
  deadline?: NodeJS.Timeout;
  // Send side: the framed message still to send when flow control held it back, and the stream's window.
  body: Buffer = NOTHING;
  sendWindow = 0;
  // Receive side: the stream's remaining window and bytes consumed not yet credited back.
  receiveWindow = 0;
  unacknowledged = 0;
  readonly #chunks: Buffer[] = [];
  #received = 0;
  /** The message length its 5-byte prefix announced, once the prefix arrived. */
  #announced = -1;

  constructor(
    readonly path: string,
    readonly metadataBlock: Buffer,
    readonly message: Uint8Array,
    private readonly maxReceiveBytes: number,
    private readonly resolve: (outcome: H2Outcome) => void,
  ) {}

  settle(code: number, details: string, bytes?: Buffer, tooLarge?: boolean): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.deadline);
    this.cancel = undefined;
    this.resolve({ code, details, bytes, headers: this.headers, trailers: this.trailers, tooLarge });
  }

  /** A header block: the response headers first, then the trailers. */
  onHeaders(fields: ResponseHeaders): void {
    if (!this.headers) this.headers = fields;
    else if (!this.trailers) this.trailers = fields;
  }

  /**
   * Payload of a DATA frame; false when the answer is refused (settled): its length prefix announces more than
   * the limit (checked as soon as the prefix arrives, not after buffering), or more bytes came than announced.
   */
  onData(payload: Buffer): boolean {
    if (payload.length === 0) return true;
    this.#received += payload.length;
    // A view into the socket's chunk (node reads each chunk into a fresh buffer, so it stays valid); a small
    // payload of a large chunk is copied, so tiny DATA frames cannot pin a whole chunk each.
    const chunkSize = payload.buffer.byteLength;
    this.#chunks.push(chunkSize > 16_384 && payload.length * 8 < chunkSize ? Buffer.from(payload) : payload);
    if (this.#announced < 0 && this.#received >= 5) {
      const prefix = this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks);
      this.#announced = prefix.readUInt32BE(1);
    }
    if (this.#announced > this.maxReceiveBytes || this.#received > this.maxReceiveBytes + 5) {
      const size = Math.max(this.#announced, this.#received - 5);
      this.settle(
        GrpcStatus.RESOURCE_EXHAUSTED,
        `Received message larger than max (${size} vs. ${this.maxReceiveBytes})`,
        undefined,
        true,
      );
      return false;
    }
    if (this.#announced >= 0 && this.#received > 5 + this.#announced) {
      this.settle(GrpcStatus.INTERNAL, 'Received more than one message on a unary call');
      return false;
    }
    return true;
  }

  /** The stream ended (END_STREAM) or was reset by the node (`rstCode`): the call's status from what arrived. */
  finish(rstCode?: number): void {
    if (this.settled) return;
    const headers = this.headers;
    if (!headers) {
      if (rstCode !== undefined) return this.settle(codeOfReset(rstCode), `Received RST_STREAM with code ${rstCode}`);
      return this.settle(GrpcStatus.INTERNAL, 'Stream ended without headers');
    }
    const httpStatus = Number(headers[':status']);
    const contentType = headers['content-type'] ?? '';
    if (httpStatus !== 200 || !contentType.startsWith('application/grpc')) {
      return this.settle(codeOfHttpStatus(httpStatus), `Received HTTP status code ${httpStatus}`);
    }
    // Trailers-only answers carry the status in the headers.
    const statusSource = this.trailers ?? headers;
    const rawCode = statusSource['grpc-status'];
    if (rawCode === undefined) {
      if (rstCode) return this.settle(codeOfReset(rstCode), `Received RST_STREAM with code ${rstCode}`);
      return this.settle(GrpcStatus.UNKNOWN, 'No status received');
    }
    // Digits only: Number('') is 0, and an empty or odd status must not read as OK.
    if (!/^\d{1,10}$/.test(rawCode))
      return this.settle(GrpcStatus.UNKNOWN, `Invalid grpc-status ${JSON.stringify(rawCode.slice(0, 40))}`);
    const code = Number(rawCode);
    const details = decodeMessage(statusSource['grpc-message']);
    if (code !== GrpcStatus.OK) return this.settle(code, details);
    const chunks = this.#chunks;
    const outcome = readMessage(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    this.settle(outcome.code, outcome.details, outcome.bytes);
  }
}
