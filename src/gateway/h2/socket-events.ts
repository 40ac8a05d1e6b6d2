// Thread: main
// The socket events an H2Connection acts on, in its own terms (the socket's setup in one place).
import type { Socket } from 'node:net';

export interface SocketHandlers {
  /** TCP connected. */
  connected(): void;
  /** TLS handshake done (TLS sockets only). */
  secured(): void;
  /** The peer ended its side. */
  ended(): void;
  data(chunk: Buffer): void;
  failed(error: Error): void;
  closed(): void;
}

export function listenToSocket(socket: Socket, tls: boolean, on: SocketHandlers): void {
  socket.setNoDelay(true);
  socket.unref();
  socket.on('connect', () => {
    // Again on the connected handle: happy-eyeballs connects (a name's records tried in turn) replace the handle
    // that setNoDelay above was given.
    socket.setNoDelay(true);
    on.connected();
  });
  if (tls) socket.on('secureConnect', on.secured);
  socket.on('end', on.ended);
  socket.on('data', on.data);
  socket.on('error', on.failed);
  socket.on('close', on.closed);
}
