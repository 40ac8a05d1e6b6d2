// Thread: main
// Socket.IO on the uWS engine's app (socket.io's `attachApp`). uWS matches the static `/socket.io/` ahead of
// the catch-all 404, whatever the order of registration.
import type { Server } from 'socket.io';
import type uWS from 'uWebSockets.js';
import { httpErrors } from './errors.js';
import { readHeaders } from './headers.js';
import { socketIoServer, type SocketIoOptions } from './socket-io.js';
import { answerAndClose } from './uws-websocket.js';
import { uwsPeer } from './uws-peer.js';
import type { Admission } from './websocket.js';

export function attachSocketIoUws(app: uWS.TemplatedApp, options: SocketIoOptions, admission: Admission): Server {
  const io = socketIoServer(options);
  io.attachApp(admittingHandshakes(app, admission), {
    // uWS's own idle timer is only a safety net behind the heartbeat, which keeps traffic flowing every heartbeatMs.
    idleTimeout: Math.min(960, options.idleTimeoutSeconds * 2),
    maxBackpressure: options.maxBackpressureBytes,
  } as Record<string, unknown>);
  return io;
}

/**
 * The app as Engine.IO's uServer.attach sees it: its HTTP (`any`) and upgrade handlers run behind the front
 * door's rate limit for handshakes (requests without a `sid`). Engine.IO's own refusal (allowRequest) would
 * answer 403 `{"code":4}`; the contract's answer over the limit is 429 with Retry-After.
 * In cluster mode a handshake waits for the count every node shares. uWS's request is valid only during the
 * callback, so what Engine.IO reads of it is captured first and Engine.IO is handed a replay of it.
 */
function admittingHandshakes(app: uWS.TemplatedApp, admission: Admission): uWS.TemplatedApp {
  const admit = (res: uWS.HttpResponse, req: uWS.HttpRequest, handler: (req: uWS.HttpRequest) => void) => {
    if (new URLSearchParams(req.getQuery() ?? '').has('sid')) return handler(req);
    const headers = readHeaders(req);
    const wait = admission.retryAfter(admission.clientAddress(uwsPeer(res), headers));
    if (typeof wait === 'number') {
      if (wait > 0) return answerAndClose(res, httpErrors.tooManyRequests(wait), admission.corsHeaders(headers.origin));
      return handler(req);
    }
    const replay = replayOf(req, headers);
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    // The shared count never rejects (it falls back to this node's count).
    void wait.then((wait) => {
      if (aborted) return;
      if (wait > 0) return answerAndClose(res, httpErrors.tooManyRequests(wait), admission.corsHeaders(headers.origin));
      res.cork(() => handler(replay));
    });
  };
  const wrapped = {
    any(pattern: string, handler: (res: uWS.HttpResponse, req: uWS.HttpRequest) => void) {
      app.any(pattern, (res, req) => admit(res, req, (req) => handler(res, req)));
      return facade;
    },
    ws(pattern: string, behavior: uWS.WebSocketBehavior<unknown>) {
      const upgrade = behavior.upgrade!;
      app.ws(pattern, {
        ...behavior,
        upgrade: (res, req, context) => admit(res, req, (req) => upgrade(res, req, context)),
      });
      return facade;
    },
  };
  // Everything else (Socket.IO's adapter publishes through the app) is the app itself.
  const facade: uWS.TemplatedApp = new Proxy(app, {
    get(target, name) {
      if (name === 'any' || name === 'ws') return wrapped[name];
      const value = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return facade;
}

/**
 * A uWS request as captured during its callback, with just the methods Engine.IO's uServer calls on it
 * (node_modules/engine.io/build/userver.js: prepare and handleUpgrade).
 */
function replayOf(req: uWS.HttpRequest, headers: Readonly<Record<string, string>>): uWS.HttpRequest {
  const method = req.getMethod();
  const url = req.getUrl();
  const query = req.getQuery();
  const replay: Pick<uWS.HttpRequest, 'getMethod' | 'getUrl' | 'getQuery' | 'getHeader' | 'forEach'> = {
    getMethod: () => method,
    getUrl: () => url,
    getQuery: () => query,
    getHeader: (name: string) => headers[name.toLowerCase()] ?? '',
    forEach: (callback) => {
      for (const name in headers) callback(name, headers[name]);
    },
  };
  return replay as uWS.HttpRequest;
}
