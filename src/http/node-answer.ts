// Thread: main
// Answers the portable engine writes on a bare socket: a refused WebSocket or Socket.IO handshake (the
// connection is an upgrade, so node:http's response object is not there), with the bytes uWS would write, and
// what node:http's parser refused (node-client-error.ts).
import type { Duplex } from 'node:stream';
import type { HttpError } from './errors.js';
import { statusLine } from './status-line.js';

/** How long a client may take to read an answer that closes its connection before the socket is destroyed. */
const CLOSE_GRACE_MS = 2_000;

/** `withBody` false: the answer to a HEAD request, its Content-Length without the body. */
export function answerSocketAndClose(
  socket: Duplex,
  error: HttpError,
  cors: readonly [string, string][] = [],
  withBody = true,
): void {
  const answer = error.toReply();
  const body = Buffer.from(answer.body);
  let head = `HTTP/1.1 ${statusLine(answer.status)}\r\nContent-Type: ${answer.contentType}\r\n`;
  for (const name in answer.headers) head += `${name}: ${answer.headers[name]}\r\n`;
  for (const [name, value] of cors) head += `${name}: ${value}\r\n`;
  head += `Content-Length: ${body.byteLength}\r\nConnection: close\r\n\r\n`;
  if (!socket.writable) return void socket.destroy();
  socket.end(withBody ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1'));
  // A client that never closes its side (one still trickling bytes) must not hold the socket; destroying it at
  // once could reset the connection before the client read the answer.
  const destroy = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  destroy.unref();
  socket.once('close', () => clearTimeout(destroy));
}
