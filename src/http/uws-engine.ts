// Thread: main
// The native engine: the front door on uWebSockets.js (with its siblings uws-*.ts, the only code that touches
// uWS). Each route's steps are built once at mount (door-core.ts); a request is one UwsExchange.
import type uWS from 'uWebSockets.js';
import type { Server as SocketIoServer } from 'socket.io';
import { bodyText } from './body.js';
import { NOT_FOUND, PREFLIGHT, DoorCore, type RouteSteps } from './door-core.js';
import { Exchange, NO_PARAMS, safeDecode } from './exchange.js';
import type { FrontDoor, HttpEngine, HttpServerOptions } from './front-door.js';
import { readHeaders } from './headers.js';
import type { Router } from './router.js';
import { limitSocketIoFrames, type SocketIoOptions } from './socket-io.js';
import { statusLine } from './status-line.js';
import { openStreamWriter } from './stream.js';
import type { Reply, StreamWriter } from './types.js';
import type { UwsBuild, UwsModule } from './uws-native.js';
import { uwsPeer } from './uws-peer.js';
import { attachSocketIoUws } from './uws-socket-io.js';
import { mountWebSocket } from './uws-websocket.js';
import type { WebSocketLimits, WebSocketRoute } from './websocket.js';

class UwsExchange extends Exchange {
  constructor(
    door: DoorCore,
    steps: RouteSteps,
    private readonly res: uWS.HttpResponse,
    req: uWS.HttpRequest,
  ) {
    // Everything read from `req` must be read now: uWS invalidates it when the route's callback returns.
    const headers = readHeaders(req);
    let params = NO_PARAMS;
    const names = steps.paramNames;
    if (names.length > 0) {
      params = Object.create(null); // keyed by route names, valued by the client
      for (let i = 0; i < names.length; i++) params[names[i]] = safeDecode(req.getParameter(i) ?? '');
    }
    super(
      door,
      steps,
      req.getCaseSensitiveMethod().toUpperCase(),
      req.getUrl(),
      req.getQuery() ?? '',
      headers,
      params,
      uwsPeer(res),
    );
    res.onAborted(() => this.clientGone());
  }

  protected write(reply: Reply, closeConnection: boolean): void {
    const res = this.res;
    res.cork(() => {
      // uWS writes `200 OK` itself before the first header: one native call fewer for most answers.
      if (reply.status !== 200) res.writeStatus(statusLine(reply.status));
      // Content-Type, X-Request-Id and the CORS headers in one native call (a fifth of a microsecond each),
      // the same bytes as one call per header: uWS writes `name: value\r\n` as given.
      res.writeHeader('Content-Type', `${reply.contentType}\r\nX-Request-Id: ${this.requestId}${this.cors.block}`);
      if (reply.headers) for (const name in reply.headers) res.writeHeader(name, reply.headers[name]);
      // A HEAD answer has no body (a client reads one as the start of the next answer). Not endWithoutBody:
      // this uWS build then reports a bogus Content-Length and drops the connection's next request.
      res.end(this.method === 'HEAD' ? '' : reply.body, closeConnection);
    });
  }

  protected readBody(limit: number): void {
    const chunks: Buffer[] = [];
    let size = 0;
    this.res.onData((chunk, isLast) => {
      if (this.finished) return;
      size += chunk.byteLength;
      if (size > limit) return this.tooLarge();
      // A body in one chunk (nearly all) is decoded straight from uWS's memory, valid during this callback.
      if (isLast && chunks.length === 0) return this.bodyRead(bodyText(chunk));
      // uWS reuses the chunk's memory after this callback: copy it, into Node's pooled slab for small chunks
      // (slice(0) would allocate an ArrayBuffer of its own per chunk, 8x slower and more for the GC).
      const copy = Buffer.allocUnsafe(chunk.byteLength);
      copy.set(new Uint8Array(chunk));
      chunks.push(copy);
      if (isLast) this.bodyRead(bodyText(Buffer.concat(chunks)));
    });
  }

  protected openStream(status: number, headers: Record<string, string>): StreamWriter {
    const res = this.res;
    const signal = this.signal();
    const { writer, closed } = openStreamWriter(
      {
        write(chunk) {
          let ok = true;
          res.cork(() => {
            ok = res.write(chunk);
          });
          return ok;
        },
        onWritable(listener) {
          res.onWritable(() => {
            listener();
            return true;
          });
        },
        // A stream that ends during the drain closes its connection, as every answer then does.
        end: () => res.cork(() => res.end(undefined, this.door.draining)),
        destroy: () => res.close(), // onAborted -> signal -> closed()
      },
      this.door.options.streamLimits,
      this.door.options.log,
      this.requestId,
      () => this.finish(),
      signal.aborted,
      this.trace,
      headers['Content-Type'],
    );
    signal.addEventListener('abort', closed, { once: true });
    if (!signal.aborted) {
      res.cork(() => {
        res.writeStatus(statusLine(status));
        for (const name in headers) res.writeHeader(name, headers[name]);
        for (const [name, value] of this.cors) res.writeHeader(name, value);
      });
    }
    return writer;
  }
}

export class UwsFrontDoor implements FrontDoor {
  readonly engine: HttpEngine;
  readonly app: uWS.TemplatedApp;
  readonly #core: DoorCore;
  #listenSocket: uWS.us_listen_socket | null = null;

  constructor(
    private readonly uws: UwsModule,
    build: UwsBuild,
    version: string,
    private readonly options: HttpServerOptions,
  ) {
    this.engine = { name: 'uws', build, version };
    this.app = uws.App();
    this.#core = new DoorCore(options, 'uws');
  }

  get port(): number {
    return this.#listenSocket ? this.uws.us_socket_local_port(this.#listenSocket) : 0;
  }

  get inFlight(): number {
    return this.#core.inFlight;
  }

  /** A WebSocket route (see uws-websocket.ts); uWS matches it ahead of the catch-all 404. */
  websocket<T>(pattern: string, route: WebSocketRoute<T>, limits: WebSocketLimits): void {
    mountWebSocket(this.app, pattern, route, limits, this.#core.sockets);
  }

  socketIo(options: Omit<SocketIoOptions, 'corsOrigin'>): SocketIoServer {
    const io = attachSocketIoUws(this.app, { ...options, corsOrigin: this.options.corsOrigin }, this.#core.admission);
    limitSocketIoFrames(io, this.#core.sockets.limits, this.options.log);
    return io;
  }

  publish(topic: string, text: string): void {
    this.#core.sockets.topics.publish(topic, text);
  }

  mount(router: Router): void {
    const core = this.#core;
    for (const route of router.routes) {
      const steps = core.steps(route);
      const method =
        route.method === 'DELETE' ? 'del' : (route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch');
      this.app[method](route.pattern, (res, req) => new UwsExchange(core, steps, res, req).begin());
      // HEAD wherever GET: the same steps, the answer without its body (UwsExchange.write).
      if (route.method === 'GET')
        this.app.head(route.pattern, (res, req) => new UwsExchange(core, steps, res, req).begin());
    }
    const preflight = core.steps(PREFLIGHT);
    const notFound = core.steps(NOT_FOUND);
    this.app.options('/*', (res, req) => new UwsExchange(core, preflight, res, req).begin());
    this.app.any('/*', (res, req) => new UwsExchange(core, notFound, res, req).begin());
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      // Exclusive: uWS binds with SO_REUSEPORT by default, so a second server on a taken port would start and
      // silently take part of its connections (a process left running, a node started twice); it must fail instead.
      this.app.listen(this.options.host, this.options.port, this.uws.LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (!socket) return reject(new Error(`Cannot listen on ${this.options.host}:${this.options.port}`));
        this.#listenSocket = socket;
        resolve(this.port);
      });
    });
  }

  drain(timeoutMs: number): Promise<boolean> {
    if (this.#listenSocket) this.uws.us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = null;
    return this.#core.drain(timeoutMs);
  }

  close(): void {
    (this.app as unknown as { close?: () => void }).close?.();
  }
}
