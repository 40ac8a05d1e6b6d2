// Main thread. Unary gRPC calls over node:http2, hand-written for the gateway's hot path: one POST per call,
// a 5-byte length-prefixed message each way, the status in the trailers (gRPC over HTTP/2, PROTOCOL-HTTP2.md).
// @grpc/grpc-js runs every call through resolving, retrying, load-balancing and filter layers: about half the
// gateway's CPU per query went there (bench/README.md). Plaintext only, as the gateway's channel always was.
import http2 from 'node:http2';
import { connect as netConnect } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';

/** Where the node listens, from a GATEWAY_GRPC_TARGET: host:port (dns: and ipv4:/ipv6: forms too) or unix:path. */
export type H2Target = { host: string; port: number } | { socketPath: string };

const DEFAULT_PORT = 443; // as grpc-js, for a target without a port

/** The address of a gRPC target string; undefined for forms this client does not dial (several addresses, xds:). */
export function parseTarget(target: string): H2Target | undefined {
  if (target.startsWith('unix:')) {
    const path = target.startsWith('unix://') ? target.slice('unix://'.length) : target.slice('unix:'.length);
    return path ? { socketPath: path } : undefined;
  }
  let rest = target;
  if (rest.startsWith('dns:')) {
    rest = rest.slice('dns:'.length);
    // dns://authority/host:port names a DNS server; the system resolver is used either way.
    if (rest.startsWith('//')) rest = rest.slice(rest.indexOf('/', 2) + 1);
  } else if (rest.startsWith('ipv4:') || rest.startsWith('ipv6:')) {
    rest = rest.slice(5);
    if (rest.includes(',')) return undefined;
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) {
    return undefined;
  }
  const bracket = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(rest);
  if (bracket) return { host: bracket[1], port: Number(bracket[2] ?? DEFAULT_PORT) };
  const colon = rest.lastIndexOf(':');
  if (colon === -1) return rest ? { host: rest, port: DEFAULT_PORT } : undefined;
  const port = rest.slice(colon + 1);
  if (!/^\d{1,5}$/.test(port) || rest.indexOf(':') !== colon) return undefined;
  return { host: rest.slice(0, colon), port: Number(port) };
}

/** What one call answered: the message bytes on OK, the gRPC status either way, response metadata as received. */
export interface H2Outcome {
  code: number;
  details: string;
  bytes?: Buffer;
  /** The response headers, then the trailers (lower-case names). */
  headers?: http2.IncomingHttpHeaders;
  trailers?: http2.IncomingHttpHeaders;
}

const { HTTP2_HEADER_METHOD, HTTP2_HEADER_PATH, HTTP2_HEADER_STATUS, HTTP2_HEADER_CONTENT_TYPE, HTTP2_HEADER_TE } = http2.constants;

/** HTTP status -> gRPC code when a response is not gRPC at all (the table of grpc-js and the spec's doc). */
function codeOfHttpStatus(status: number): number {
  switch (status) {
    case 400: return GrpcStatus.INTERNAL;
    case 401: return GrpcStatus.UNAUTHENTICATED;
    case 403: return GrpcStatus.PERMISSION_DENIED;
    case 404: return GrpcStatus.UNIMPLEMENTED;
    case 429: case 502: case 503: case 504: return GrpcStatus.UNAVAILABLE;
    default: return GrpcStatus.UNKNOWN;
  }
}

/** RST_STREAM codes as grpc-js reports them. */
function codeOfReset(rstCode: number): number {
  switch (rstCode) {
    case http2.constants.NGHTTP2_REFUSED_STREAM: return GrpcStatus.UNAVAILABLE;
    case http2.constants.NGHTTP2_CANCEL: return GrpcStatus.CANCELLED;
    case http2.constants.NGHTTP2_ENHANCE_YOUR_CALM: return GrpcStatus.RESOURCE_EXHAUSTED;
    default: return GrpcStatus.INTERNAL;
  }
}

function decodeMessage(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return '';
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export class H2Channel {
  readonly #target: H2Target;
  readonly #authority: string;
  readonly #maxReceiveBytes: number;
  readonly #keepaliveMs: number;
  #session?: http2.ClientHttp2Session;
  #closed = false;

  constructor(target: H2Target, options: { maxReceiveBytes: number; keepaliveMs: number }) {
    this.#target = target;
    this.#authority = 'socketPath' in target ? 'localhost' : target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
    this.#maxReceiveBytes = options.maxReceiveBytes;
    this.#keepaliveMs = options.keepaliveMs;
  }

  /** The open session, or a new one; a session that closed, failed or got GOAWAY is left to finish its calls. */
  #sessionFor(): http2.ClientHttp2Session {
    const current = this.#session;
    if (current && !current.closed && !current.destroyed) return current;
    const target = this.#target;
    // No cap on the session's buffered bytes (as grpc-js): many large answers at once must not be refused with ENHANCE_YOUR_CALM.
    const options: http2.ClientSessionOptions = { maxSessionMemory: Number.MAX_SAFE_INTEGER };
    const session =
      'socketPath' in target
        ? http2.connect('http://localhost', { ...options, createConnection: () => netConnect(target.socketPath) })
        : http2.connect(`http://${this.#authority}`, options);
    const forget = () => {
      if (this.#session === session) this.#session = undefined;
    };
    session.on('goaway', forget);
    session.on('close', forget);
    // A failed connection fails its calls (their streams error with it); the next call dials again.
    session.on('error', forget);
    // Pings keep NATs and proxies from dropping a quiet connection; a session that stops answering is dropped.
    const keepalive = setInterval(() => {
      if (session.closed || session.destroyed) return clearInterval(keepalive);
      session.ping((error) => {
        if (error) session.destroy();
      });
    }, this.#keepaliveMs).unref();
    session.on('close', () => clearInterval(keepalive));
    session.unref();
    this.#session = session;
    return session;
  }

  /**
   * One unary call. Never rejects: transport failures are answered as their gRPC status (UNAVAILABLE when
   * the node cannot be reached, DEADLINE_EXCEEDED past the deadline), as grpc-js reports them.
   */
  call(path: string, message: Uint8Array, metadata: Record<string, string>, timeoutMs: number): Promise<H2Outcome> {
    return new Promise((resolve) => {
      if (this.#closed) return resolve({ code: GrpcStatus.UNAVAILABLE, details: 'Channel has been shut down' });
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.#sessionFor().request(
          {
            [HTTP2_HEADER_METHOD]: 'POST',
            [HTTP2_HEADER_PATH]: path,
            [HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
            [HTTP2_HEADER_TE]: 'trailers',
            'grpc-timeout': `${timeoutMs}m`,
            ...metadata,
          },
          { endStream: false },
        );
      } catch (error) {
        return resolve({ code: GrpcStatus.UNAVAILABLE, details: (error as Error).message });
      }
      let settled = false;
      let headers: http2.IncomingHttpHeaders | undefined;
      let trailers: http2.IncomingHttpHeaders | undefined;
      const chunks: Buffer[] = [];
      let received = 0;
      const settle = (outcome: H2Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        outcome.headers = headers;
        outcome.trailers = trailers;
        resolve(outcome);
      };
      const deadline = setTimeout(() => {
        settle({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }, timeoutMs);
      stream.on('response', (received) => {
        headers = received;
      });
      stream.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > this.#maxReceiveBytes + 5) {
          settle({ code: GrpcStatus.RESOURCE_EXHAUSTED, details: `Received message larger than max (${received} vs. ${this.#maxReceiveBytes})` });
          stream.close(http2.constants.NGHTTP2_CANCEL);
          return;
        }
        chunks.push(chunk);
      });
      stream.on('trailers', (received) => {
        trailers = received;
      });
      let failure: Error | undefined;
      stream.on('error', (error: Error) => {
        // The session's failure (connection refused, dropped) or a reset: answered in 'close'.
        failure = error;
      });
      stream.on('close', () => {
        if (settled) return;
        if (!headers) {
          // Nothing answered: the node reset this stream, or could not be reached or dropped the connection.
          const reset = (failure as { code?: string } | undefined)?.code === 'ERR_HTTP2_STREAM_ERROR' ? stream.rstCode : undefined;
          if (reset) return settle({ code: codeOfReset(reset), details: `Received RST_STREAM with code ${reset}` });
          const cause = (failure as { cause?: Error } | undefined)?.cause ?? failure;
          return settle({ code: GrpcStatus.UNAVAILABLE, details: `No connection established${cause ? `: ${cause.message}` : ''}` });
        }
        const httpStatus = Number(headers[HTTP2_HEADER_STATUS]);
        const contentType = String(headers[HTTP2_HEADER_CONTENT_TYPE] ?? '');
        if (httpStatus !== 200 || !contentType.startsWith('application/grpc')) {
          return settle({ code: codeOfHttpStatus(httpStatus), details: `Received HTTP status code ${httpStatus}` });
        }
        // Trailers-only answers carry the status in the headers.
        const statusSource = trailers ?? headers;
        const rawCode = statusSource['grpc-status'];
        if (rawCode === undefined) {
          const code = stream.rstCode ? codeOfReset(stream.rstCode) : GrpcStatus.UNKNOWN;
          return settle({ code, details: stream.rstCode ? `Received RST_STREAM with code ${stream.rstCode}` : 'No status received' });
        }
        const code = Number(rawCode);
        const details = decodeMessage(statusSource['grpc-message']);
        if (code !== GrpcStatus.OK) return settle({ code: Number.isInteger(code) ? code : GrpcStatus.UNKNOWN, details });
        settle(readMessage(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
      });
      stream.end(frame(message));
    });
  }

  close(): void {
    this.#closed = true;
    this.#session?.close();
    this.#session = undefined;
  }
}

/** The 5-byte prefix (uncompressed, big-endian length) and the message. */
function frame(message: Uint8Array): Buffer {
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
  if (body[0] !== 0) return { code: GrpcStatus.INTERNAL, details: 'Received a compressed message without grpc-accept-encoding' };
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length) return { code: GrpcStatus.INTERNAL, details: body.length < 5 + length ? 'Truncated message' : 'Received more than one message on a unary call' };
  return { code: GrpcStatus.OK, details: 'OK', bytes: body.subarray(5) };
}
