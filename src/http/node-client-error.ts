// Thread: main
// The portable engine: what node:http's parser refuses before a route sees a request (a malformed
// request line or header, headers over the size limit, headers or a body that do not arrive in time) is answered
// in the contract's error body, `{ statusCode, message, error }`, and the connection closed, not with node's bare
// 400/408/431.
import type { Duplex } from 'node:stream';
import { HttpError } from './errors.js';
import { answerSocketAndClose } from './node-answer.js';

/** The bounds the answers name. */
export interface ClientErrorLimits {
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

type ParserError = Error & { code?: string; reason?: string; rawPacket?: Buffer };

/** The 'clientError' listener of the portable engine's server. */
export function answerClientError(error: ParserError, socket: Duplex, limits: ClientErrorLimits): void {
  // Gone (a reset), or an answer already started on it: nothing can be written in front of it.
  const started = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || started) return void socket.destroy();
  // A HEAD request's answer has no body (its client would read one as data after the close).
  const head = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
  answerSocketAndClose(socket, refusalOf(error, limits), [], !head);
}

/**
 * What the portable engine answers a request its parser refused, before any route (docs/errors.md,
 * `npm run docs:errors`). Each closes the connection.
 */
export const protocolErrors = {
  requestTimeout: (limits: ClientErrorLimits) =>
    HttpError.of(
      408,
      `The request did not arrive in time: its headers within ${limits.headersTimeoutMs} ms, ` +
        `all of it within ${limits.requestTimeoutMs} ms`,
    ),
  headersTooLarge: (limits: ClientErrorLimits) =>
    HttpError.of(431, `The request line and headers are larger than ${limits.maxHeaderBytes} bytes`),
  chunkExtensionsTooLarge: () => HttpError.of(413, 'The chunk extensions of the body are too large'),
  malformed: (reason: string) => HttpError.of(400, `Malformed HTTP request: ${reason}`),
};

export const PROTOCOL_ERROR_MEANINGS: { readonly [K in keyof typeof protocolErrors]: string } = {
  requestTimeout: 'The headers or the whole request did not arrive within their time limits (a slow client)',
  headersTooLarge: 'The request line and headers are over the size limit',
  chunkExtensionsTooLarge: "A chunked body's chunk extensions are too large",
  malformed: 'The request is not HTTP/1.1 the parser accepts',
};

function refusalOf(error: ParserError, limits: ClientErrorLimits): HttpError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return protocolErrors.requestTimeout(limits);
    case 'HPE_HEADER_OVERFLOW':
      return protocolErrors.headersTooLarge(limits);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return protocolErrors.chunkExtensionsTooLarge();
    default:
      return protocolErrors.malformed(error.reason ?? error.code ?? error.message);
  }
}
