// The front door on uWebSockets.js: the only module (with its siblings) that touches uWS.
// Each route's pipeline is built once; a request runs: rate limit -> headers -> body -> handler -> reply.
import uWS from 'uWebSockets.js';
import type { Logger } from '../log.js';
import { sseStreamsActive } from '../metrics/catalogue.js';
import { observeRequest } from '../metrics/http.js';
import { AddressList, addressOfBytes, peerKey } from './client-address.js';
import { ALLOWED_HEADERS, ALLOWED_METHODS, createCors, type CorsPairs } from './cors.js';
import { bodyText, decodeBody, type DecodedBody } from './body.js';
import { readHeaders } from './headers.js';
import { nextRequestId } from './request-id.js';
import { resolveForwarded, type ProxyTrust } from './proxy-trust.js';
import { HttpError, httpErrors } from './errors.js';
import { RateLimiter, withLocalFallback, type SharedRateLimit } from './rate-limit.js';
import { statusLine } from './status-line.js';
import type { Route, Router } from './router.js';
import { attachSocketIo, type SocketIoOptions } from './socket-io.js';
import type { HttpRequest, HttpResponse, Reply, StreamWriter } from './types.js';
import { mountWebSocket, Topics, type Admission, type SocketFrontDoor, type WebSocketLimits, type WebSocketRoute } from './websocket.js';
import type { Server as SocketIoServer } from 'socket.io';

export interface HttpServerOptions {
  host: string;
  port: number;
  bodyLimitBytes: number;
  corsOrigin: string;
  /** Unset: X-Forwarded-For is ignored and the socket peer is the client. */
  proxyTrust?: ProxyTrust;
  rateLimit: { max: number; windowSeconds: number; allowlist: string[] };
  /**
   * Cluster mode: HTTP requests and handshakes are counted by every node together (a request or handshake waits
   * for the count; this node's own count answers when the shared one fails). Unset: the synchronous in-memory count.
   */
  sharedRateLimit?: SharedRateLimit;
  /** While draining, the server stays up until no request has arrived for this long (see drain). */
  drainQuietMs: number;
  /** Bounds of a streamed answer (SSE) whose reader stops reading; past either, the stream is closed. */
  streamLimits: StreamLimits;
  log: Logger;
  /** Count and time every request for /metrics (METRICS_ENABLED). */
  metrics?: boolean;
}

export interface StreamLimits {
  /** Bytes written to a stream since the socket last took data (SSE_MAX_BUFFER_BYTES). */
  maxBufferBytes: number;
  /** How long a stream may stay unable to send (SSE_STALL_TIMEOUT_SECONDS). */
  stallTimeoutMs: number;
}

const sseStreams = sseStreamsActive.with();
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Not a status any client receives: the metric label of a request its client abandoned before the answer. */
const CLIENT_CLOSED_REQUEST = 499;
/** The params of a route without any: one frozen object shared by its requests. */
const NO_PARAMS: Record<string, string> = Object.freeze(Object.create(null));
const NO_BODY: DecodedBody = { body: undefined };

/** Whether the native uWS build loaded (the JavaScript fallback lacks the native helpers). */
export const uwsIsNative = typeof (uWS as unknown as { getParts?: unknown }).getParts === 'function';

/** A request as handlers see it; a class, so its lazy getters are shared, not new functions per request. */
class IncomingRequest implements HttpRequest {
  #query: URLSearchParams | undefined;
  readonly body: unknown;
  readonly bodyError?: string;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly rawQuery: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly params: Readonly<Record<string, string>>,
    readonly ip: string,
    readonly requestId: string,
    decoded: DecodedBody,
    private readonly abortSignal: () => AbortSignal,
  ) {
    this.body = decoded.body;
    if (decoded.bodyError !== undefined) this.bodyError = decoded.bodyError;
  }

  get signal(): AbortSignal {
    return this.abortSignal();
  }

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.rawQuery));
  }
}

export class HttpServer implements SocketFrontDoor {
  readonly app: uWS.TemplatedApp = uWS.App();
  #listenSocket: uWS.us_listen_socket | null = null;
  #inFlight = 0;
  #idleWaiters: (() => void)[] = [];
  #draining = false;
  #lastRequestAt = 0;
  readonly #cors;
  readonly #rateLimiter: RateLimiter;
  readonly #sharedRateLimit: SharedRateLimit | undefined;
  readonly #accessLog: boolean;
  readonly #metrics: boolean;
  /** Normalised peer addresses by peerKey: uWS reports a peer as bytes, and writing them as text is costly enough to remember. */
  readonly #peers = new Map<number | string, string>();
  readonly #topics = new Topics();

  constructor(private readonly options: HttpServerOptions) {
    this.#cors = createCors(options.corsOrigin);
    this.#rateLimiter = new RateLimiter({
      max: options.rateLimit.max,
      windowMs: options.rateLimit.windowSeconds * 1000,
      allowlist: new AddressList(options.rateLimit.allowlist),
    });
    this.#sharedRateLimit = options.sharedRateLimit && withLocalFallback(options.sharedRateLimit, this.#rateLimiter, options.log);
    this.#accessLog = options.log.isLevelEnabled('debug');
    this.#metrics = options.metrics ?? false;
  }

  get port(): number {
    return this.#listenSocket ? uWS.us_socket_local_port(this.#listenSocket) : 0;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The rate limit and client address of HTTP requests, for WebSocket and Socket.IO handshakes. */
  readonly #admission: Admission = {
    clientAddress: (res, headers) => this.#clientAddress(res, headers),
    retryAfter: (ip) => this.#sharedRateLimit?.(ip) ?? this.#rateLimiter.hit(ip),
    corsHeaders: (origin) => this.#cors(origin),
  };

  /** A WebSocket route (see websocket.ts); uWS matches it ahead of the catch-all 404. */
  websocket<T>(pattern: string, route: WebSocketRoute<T>, limits: WebSocketLimits): void {
    mountWebSocket(this.app, pattern, route, limits, this.#admission, this.#topics, this.options.log);
  }

  /** Socket.IO attached to this app (see socket-io.ts), with the CORS of the HTTP routes. */
  socketIo(options: Omit<SocketIoOptions, 'corsOrigin'>): SocketIoServer {
    return attachSocketIo(this.app, { ...options, corsOrigin: this.options.corsOrigin }, this.#admission);
  }

  /** Sends a text frame to every WebSocket subscribed to `topic`. */
  publish(topic: string, text: string): void {
    this.#topics.publish(topic, text);
  }

  /** Mounts every route of the router, the CORS preflight and the JSON 404. */
  mount(router: Router): void {
    for (const route of router.routes) {
      const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'del';
      this.app[method === ('delete' as string) ? 'del' : method](route.pattern, (res, req) => this.#serve(res, req, route));
    }
    this.app.options('/*', (res, req) => this.#serve(res, req, PREFLIGHT));
    this.app.any('/*', (res, req) => this.#serve(res, req, NOT_FOUND));
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(this.options.host, this.options.port, (socket) => {
        if (!socket) return reject(new Error(`Cannot listen on ${this.options.host}:${this.options.port}`));
        this.#listenSocket = socket;
        resolve(this.port);
      });
    });
  }

  /**
   * Stops accepting connections and answers every request that still arrives on an open (keep-alive) connection
   * with 503, Connection: close and Retry-After, so a client moves to another node instead of being reset.
   * Resolves once nothing is in flight and no request has come for drainQuietMs, or false when the timeout passes.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.#listenSocket) uWS.us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = null;
    this.#draining = true;
    this.#lastRequestAt = Date.now();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const quietFor = Date.now() - this.#lastRequestAt;
      if (this.#inFlight === 0 && quietFor >= this.options.drainQuietMs) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#inFlight > 0 ? left : Math.min(left, this.options.drainQuietMs - quietFor));
        if (this.#inFlight > 0) {
          this.#idleWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        }
      });
    }
  }

  /** Closes every remaining connection. */
  close(): void {
    (this.app as unknown as { close?: () => void }).close?.();
  }

  #serve(res: uWS.HttpResponse, req: uWS.HttpRequest, route: Route): void {
    const started = this.#accessLog || this.#metrics ? performance.now() : 0;
    // The AbortController is created only when a handler asks for the signal: most requests never do.
    let controller: AbortController | undefined;
    let aborted = false;
    let finished = false;
    /** Counted in http_requests_total: when answered or when a stream's headers went out, else when abandoned. */
    let observed = false;
    const observe = (status: number) => {
      observed = true;
      if (this.#metrics) observeRequest(route, method, status, (performance.now() - started) / 1000);
    };
    this.#inFlight++;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (--this.#inFlight === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    };
    const signal = () => {
      if (!controller) {
        controller = new AbortController();
        if (aborted) controller.abort(new Error('client disconnected'));
      }
      return controller.signal;
    };
    res.onAborted(() => {
      aborted = true;
      controller?.abort(new Error('client disconnected'));
      // Gone before its answer (e.g. mid-body or while its handler ran): counted as 499, nginx's "client closed
      // request", so the counter's total is every request the front door took, answered or not.
      if (!observed) observe(CLIENT_CLOSED_REQUEST);
      finish();
    });

    // Everything read from `req` must be read now: uWS invalidates it when this callback returns.
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const rawQuery = req.getQuery() ?? '';
    const headers = readHeaders(req);
    let params = NO_PARAMS;
    if (route.paramNames.length > 0) {
      params = Object.create(null); // keyed by route names, valued by the client
      for (let i = 0; i < route.paramNames.length; i++) params[route.paramNames[i]] = safeDecode(req.getParameter(i) ?? '');
    }
    const ip = this.#clientAddress(res, headers);
    const requestId = headers['x-request-id'] || nextRequestId();
    const cors = this.#cors(headers.origin);

    /** `closeConnection` drops the connection after the answer (the rest of an oversized body is not read). */
    const send = (reply: Reply, closeConnection = false) => {
      if (aborted || finished) return;
      res.cork(() => {
        // uWS writes `200 OK` itself before the first header: one native call fewer for most answers.
        if (reply.status !== 200) res.writeStatus(statusLine(reply.status));
        // Content-Type, X-Request-Id and the CORS headers in one native call (a fifth of a microsecond each),
        // the same bytes as one call per header: uWS writes `name: value\r\n` as given.
        res.writeHeader('Content-Type', `${reply.contentType}\r\nX-Request-Id: ${requestId}${cors.block}`);
        if (reply.headers) for (const name in reply.headers) res.writeHeader(name, reply.headers[name]);
        // A HEAD answer has no body (a client reads one as the start of the next answer). Not endWithoutBody:
        // this uWS build then reports a bogus Content-Length and drops the connection's next request.
        res.end(method === 'HEAD' ? '' : reply.body, closeConnection || this.#draining);
      });
      finish();
      observe(reply.status);
      if (this.#accessLog) {
        this.options.log.debug(
          { reqId: requestId, method, path, status: reply.status, ip, ms: +(performance.now() - started).toFixed(2) },
          'request',
        );
      }
    };

    if (this.#draining) {
      this.#lastRequestAt = Date.now();
      return send(SHUTTING_DOWN.toReply(), true);
    }
    // Cluster mode: the shared count is asked now, while the body (if any) is read; the handler runs once both are in.
    const admitted = this.#sharedRateLimit?.(ip);
    if (!admitted) {
      const retryAfter = this.#rateLimiter.hit(ip);
      if (retryAfter > 0) return send(httpErrors.tooManyRequests(retryAfter).toReply());
    }

    const run = (text: string | undefined) => {
      const decoded = text === undefined ? NO_BODY : decodeBody(text, headers['content-type'] ?? '');
      const request = new IncomingRequest(method, path, rawQuery, headers, params, ip, requestId, decoded, signal);
      const response: HttpResponse = {
        stream: (status, streamHeaders) => {
          observe(status);
          return this.#openStream(res, signal(), status, { 'X-Request-Id': requestId, ...streamHeaders }, cors, finish, requestId);
        },
      };
      let result;
      try {
        result = route.handler(request, response);
      } catch (error) {
        return send(this.#errorReply(error, requestId));
      }
      if (result instanceof Promise) {
        result.then(
          (value) => value && send(value),
          (error) => send(this.#errorReply(error, requestId)),
        );
      } else if (result) {
        send(result);
      }
    };

    const start = admitted
      ? (text: string | undefined) =>
          void admitted.then((wait) => {
            if (wait > 0) send(httpErrors.tooManyRequests(wait).toReply());
            else if (!aborted) run(text);
          })
      : run;
    if (!WITH_BODY.has(method)) return start(undefined);
    const limit = this.options.bodyLimitBytes;
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > limit) return send(httpErrors.payloadTooLarge(limit).toReply(), true);
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (finished) return;
      size += chunk.byteLength;
      if (size > limit) return send(httpErrors.payloadTooLarge(limit).toReply(), true);
      // A body in one chunk (nearly all) is decoded straight from uWS's memory, valid during this callback.
      if (isLast && chunks.length === 0) return start(bodyText(chunk));
      // uWS reuses the chunk's memory after this callback: copy it, into Node's pooled slab for small chunks
      // (slice(0) would allocate an ArrayBuffer of its own per chunk, 8x slower and more for the GC).
      const copy = Buffer.allocUnsafe(chunk.byteLength);
      copy.set(new Uint8Array(chunk));
      chunks.push(copy);
      if (isLast) start(bodyText(Buffer.concat(chunks)));
    });
  }

  #clientAddress(res: uWS.HttpResponse, headers: Readonly<Record<string, string>>): string {
    // The binary form: uWS's text form would be decoded per request (the getpeername under both is the same).
    const bytes = new Uint8Array(res.getRemoteAddress());
    const key = peerKey(bytes);
    let peer = this.#peers.get(key);
    if (peer === undefined) {
      if (this.#peers.size > 10_000) this.#peers.clear();
      peer = addressOfBytes(bytes);
      this.#peers.set(key, peer);
    }
    const forwarded = headers['x-forwarded-for'];
    const trust = this.options.proxyTrust;
    return trust && forwarded ? resolveForwarded(peer, forwarded, trust) : peer;
  }

  #errorReply(error: unknown, requestId: string): Reply {
    if (error instanceof HttpError) return error.toReply();
    this.options.log.error({ err: error, reqId: requestId }, 'unhandled error in route');
    return httpErrors.internal().toReply();
  }

  #openStream(
    res: uWS.HttpResponse,
    signal: AbortSignal,
    status: number,
    headers: Record<string, string>,
    cors: CorsPairs,
    finish: () => void,
    requestId: string,
  ): StreamWriter {
    const drainListeners: (() => void)[] = [];
    const closeListeners: (() => void)[] = [];
    const { maxBufferBytes, stallTimeoutMs } = this.options.streamLimits;
    let closed = signal.aborted;
    // Bytes written since the socket stopped taking data, and the timer that gives up on a reader that never reads.
    let backlog = 0;
    let stall: NodeJS.Timeout | undefined;
    if (!closed) sseStreams.inc();
    const close = () => {
      if (closed) return;
      closed = true;
      clearTimeout(stall);
      sseStreams.dec();
      finish();
      for (const listener of closeListeners.splice(0)) listener();
    };
    const abandon = (reason: string) => {
      if (closed) return;
      this.options.log.warn({ reqId: requestId, reason, backlogBytes: backlog }, 'stream closed: its reader stopped reading');
      res.close(); // onAborted -> signal -> close()
    };
    signal.addEventListener('abort', close, { once: true });
    if (!closed) {
      res.cork(() => {
        res.writeStatus(statusLine(status));
        for (const name in headers) res.writeHeader(name, headers[name]);
        for (const [name, value] of cors) res.writeHeader(name, value);
      });
    }
    res.onWritable(() => {
      backlog = 0;
      clearTimeout(stall);
      stall = undefined;
      for (const listener of drainListeners.splice(0)) listener();
      return true;
    });
    return {
      get closed() {
        return closed;
      },
      write(chunk) {
        if (closed) return false;
        let ok = true;
        res.cork(() => {
          ok = res.write(chunk);
        });
        if (ok && !stall) return true;
        backlog += Buffer.byteLength(chunk);
        stall ??= setTimeout(() => abandon(`nothing sent for ${stallTimeoutMs / 1000} s`), stallTimeoutMs);
        if (backlog > maxBufferBytes) abandon(`over ${maxBufferBytes} bytes unsent`);
        return false;
      },
      onDrain(listener) {
        drainListeners.push(listener);
      },
      onClose(listener) {
        if (closed) listener();
        else closeListeners.push(listener);
      },
      end() {
        if (closed) return;
        res.cork(() => res.end());
        close();
      },
    };
  }
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

const SHUTTING_DOWN = HttpError.of(503, 'The server is shutting down; retry the request (on a new connection)', undefined, { 'Retry-After': '1' });

const PREFLIGHT: Route = {
  method: 'GET',
  pattern: '/*',
  paramNames: [],
  handler: () => ({
    status: 204,
    contentType: 'text/plain',
    body: '',
    headers: {
      'Access-Control-Allow-Methods': ALLOWED_METHODS,
      'Access-Control-Allow-Headers': ALLOWED_HEADERS,
      'Access-Control-Max-Age': '86400',
    },
  }),
};

const NOT_FOUND: Route = {
  method: 'GET',
  pattern: '/*',
  paramNames: [],
  handler: (req) => HttpError.of(404, `Cannot ${req.method} ${req.path}`).toReply(),
};
