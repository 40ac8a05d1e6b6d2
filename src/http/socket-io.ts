// Socket.IO on the front door's uWS app (socket.io's `attachApp`): Engine.IO answers `/socket.io/` itself
// (long-polling and WebSocket), beside our routes. uWS matches the static `/socket.io/` ahead of the catch-all
// 404, whatever the order of registration. Handshakes pass the front door's rate limit; CORS follows CORS_ORIGIN.
import { Server } from 'socket.io';
import type uWS from 'uWebSockets.js';
import { corsOrigins } from './cors.js';
import { httpErrors } from './errors.js';
import type { Admission } from './websocket.js';

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

export function attachSocketIo(app: uWS.TemplatedApp, options: SocketIoOptions, admission: Admission): Server {
  const heartbeatMs = (options.idleTimeoutSeconds * 1000) / 2;
  const io = new Server({
    path: options.path,
    serveClient: false,
    maxHttpBufferSize: options.maxPayloadBytes,
    pingInterval: heartbeatMs,
    pingTimeout: heartbeatMs,
    cors: corsOptions(options.corsOrigin),
    // Called for handshakes only (requests of an open session carry its sid).
    allowRequest(req, callback) {
      const headers = req.headers as Record<string, string>;
      // Engine.IO's uWS engine puts uWS's peer text on `req.connection`.
      const remote = (req as unknown as { connection?: { remoteAddress?: string } }).connection?.remoteAddress ?? '';
      const ip = admission.clientAddress(remote, headers);
      const wait = admission.retryAfter(ip);
      callback(wait > 0 ? httpErrors.tooManyRequests(wait).message : null, wait === 0);
    },
  });
  io.attachApp(app, {
    // uWS's own idle timer is only a safety net behind the heartbeat, which keeps traffic flowing every heartbeatMs.
    idleTimeout: Math.min(960, options.idleTimeoutSeconds * 2),
    maxBackpressure: options.maxBackpressureBytes,
  } as Record<string, unknown>);
  return io;
}
