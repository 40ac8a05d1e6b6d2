// Thread: main
// Socket.IO on the front door: Engine.IO answers `/socket.io/` itself (long-polling and WebSocket), beside our
// routes; each engine attaches it (uws-socket-io.ts, node-socket-io.ts). Handshakes pass the front door's rate
// limit; CORS follows CORS_ORIGIN.
import { Server } from 'socket.io';
import type { Logger } from '../base/log.js';
import { corsOrigins } from './cors.js';
import { FrameBudget, type SocketLimits } from './websocket.js';

export interface SocketIoOptions {
  path: string;
  corsOrigin: string;
  /** Largest message a client may send (Engine.IO's maxHttpBufferSize); a bigger one closes the connection. */
  maxPayloadBytes: number;
  /** A client that answers no heartbeat for this long is closed (Engine.IO ping interval + timeout). */
  idleTimeoutSeconds: number;
  maxBackpressureBytes: number;
}

function corsOptions(setting: string) {
  const origins = corsOrigins(setting);
  return origins === '*' ? { origin: '*' } : { origin: origins, credentials: true };
}

/** The Socket.IO server of the options, not yet attached to an engine. */
export function socketIoServer(options: SocketIoOptions): Server {
  const heartbeatMs = (options.idleTimeoutSeconds * 1000) / 2;
  return new Server({
    path: options.path,
    serveClient: false,
    maxHttpBufferSize: options.maxPayloadBytes,
    pingInterval: heartbeatMs,
    pingTimeout: heartbeatMs,
    cors: corsOptions(options.corsOrigin),
  });
}

/** What is read of an Engine.IO socket to hold it to its frame budget. */
interface BudgetedSocket {
  readonly readyState: string;
  on(event: 'packet', listener: () => void): void;
  close(): void;
}

/**
 * Holds every Socket.IO connection of an attached server to the front door's frame budget (its packets, on either
 * transport): past it the connection is closed, and Engine.IO drops what it still reads of a closed one.
 */
export function limitSocketIoFrames(io: Server, limits: SocketLimits, log: Logger): void {
  io.engine.on('connection', (socket: BudgetedSocket) => {
    const budget = new FrameBudget(limits.maxFramesPerSecond);
    socket.on('packet', () => {
      if (budget.take(Date.now()) || socket.readyState !== 'open') return;
      log.warn({ path: io.path(), limitPerSecond: limits.maxFramesPerSecond }, 'Socket.IO closed: too many frames');
      socket.close();
    });
  });
}
