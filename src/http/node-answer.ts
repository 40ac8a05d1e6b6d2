// Answers the portable engine writes on a bare socket: a refused WebSocket or Socket.IO handshake (the
// connection is an upgrade, so node:http's response object is not there), with the bytes uWS would write.
import type { Duplex } from 'node:stream';
import type { HttpError } from './errors.js';
import { statusLine } from './status-line.js';

export function answerSocketAndClose(socket: Duplex, error: HttpError, cors: readonly [string, string][] = []): void {
  const answer = error.toReply();
  const body = Buffer.from(answer.body);
  let head = `HTTP/1.1 ${statusLine(answer.status)}\r\nContent-Type: ${answer.contentType}\r\n`;
  for (const name in answer.headers) head += `${name}: ${answer.headers[name]}\r\n`;
  for (const [name, value] of cors) head += `${name}: ${value}\r\n`;
  head += `Content-Length: ${body.byteLength}\r\nConnection: close\r\n\r\n`;
  if (socket.writable) socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  else socket.destroy();
}
