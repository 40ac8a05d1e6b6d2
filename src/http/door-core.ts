// Thread: main
// What both engines share: the rate limit, CORS, client address, in-flight count and drain, and the steps every
// route's requests take, built once per route at mount (see exchange.ts for one request's run through them).
import { timingSafeEqual } from 'node:crypto';
import { AddressList } from './client-address.js';
import { ALLOWED_HEADERS, ALLOWED_METHODS, createCors, type CorsHeaders } from './cors.js';
import { HttpError, httpErrors } from './errors.js';
import type { HttpServerOptions } from './front-door.js';
import { resolveForwarded } from './proxy-trust.js';
import { RateLimiter, withLocalFallback, type SharedRateLimit } from './rate-limit.js';
import type { Route } from './router.js';
import type { Reply } from './types.js';
import { DEFAULT_SOCKET_LIMITS, Topics, type Admission, type SocketServing } from './websocket.js';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** One route's steps, decided at mount: what a request of it reads and whether it can carry a body. */
export interface RouteSteps {
  readonly route: Route;
  /** Route parameters to read (none: the request shares one frozen empty record). */
  readonly paramNames: readonly string[];
  /** Whether a request of this route reads a body: by the route's method, or per request for the catch-alls. */
  readsBody(method: string): boolean;
  /** The answer to a request refused past the drain's serving deadline (the JSON 503, or the route's own). */
  readonly refusal: Reply;
}

export class DoorCore {
  readonly cors: CorsHeaders;
  readonly rateLimiter: RateLimiter;
  readonly sharedRateLimit: SharedRateLimit | undefined;
  readonly accessLog: boolean;
  readonly metrics: boolean;
  /** `Bearer <OPERATOR_TOKEN>`: a request that carries it is not counted by the rate limit. */
  readonly #exemptHeader: Buffer | undefined;
  inFlight = 0;
  /** From the start of the drain: every answer closes its connection. */
  draining = false;
  /** Past the drain's serving deadline (and once it ended): requests are refused, not served. */
  refusing = false;
  lastRequestAt = 0;
  #idleWaiters: (() => void)[] = [];
  /** What the engine's WebSocket routes share (the topics publish to a session's sockets on any route). */
  readonly sockets: SocketServing;

  constructor(
    readonly options: HttpServerOptions,
    /** The engine's name, an attribute of every request's span. */
    readonly engine: 'uws' | 'node',
  ) {
    this.cors = createCors(options.corsOrigin);
    this.rateLimiter = new RateLimiter({
      max: options.rateLimit.max,
      windowMs: options.rateLimit.windowSeconds * 1000,
      allowlist: new AddressList(options.rateLimit.allowlist),
    });
    this.sharedRateLimit =
      options.sharedRateLimit && withLocalFallback(options.sharedRateLimit, this.rateLimiter, options.log);
    const token = options.rateLimit.exemptToken;
    this.#exemptHeader = token ? Buffer.from(`Bearer ${token}`) : undefined;
    this.accessLog = options.log.isLevelEnabled('debug');
    this.metrics = options.metrics ?? false;
    this.sockets = {
      admission: this.admission,
      topics: new Topics(),
      log: options.log,
      limits: options.socketLimits ?? DEFAULT_SOCKET_LIMITS,
    };
  }

  /** The rate limit, client address and CORS of HTTP requests, for WebSocket and Socket.IO handshakes. */
  readonly admission: Admission = {
    clientAddress: (peer, headers) => this.clientAddress(peer, headers),
    retryAfter: (ip) => this.sharedRateLimit?.(ip) ?? this.rateLimiter.hit(ip),
    corsHeaders: (origin) => this.cors(origin),
  };

  /** Whether the request carries the operator's token (a probe, a scrape): then the rate limit does not count it. */
  exempt(headers: Readonly<Record<string, string>>): boolean {
    const expected = this.#exemptHeader;
    const given = headers.authorization;
    if (!expected || given === undefined || given.length !== expected.length) return false;
    // Only a header of the token's length is compared (a UCAN bearer is far longer), in constant time.
    const bytes = Buffer.from(given);
    return bytes.length === expected.length && timingSafeEqual(bytes, expected);
  }

  /** The client: the socket's peer, or the address trusted proxies forwarded for (X-Forwarded-For). */
  clientAddress(peer: string, headers: Readonly<Record<string, string>>): string {
    const forwarded = headers['x-forwarded-for'];
    const trust = this.options.proxyTrust;
    return trust && forwarded ? resolveForwarded(peer, forwarded, trust) : peer;
  }

  /** The steps of `route`'s requests, built once at mount. */
  steps(route: Route): RouteSteps {
    const fixed = route === PREFLIGHT || route === NOT_FOUND ? undefined : WITH_BODY.has(route.method);
    return {
      route,
      paramNames: route.paramNames,
      readsBody: fixed === undefined ? (method) => WITH_BODY.has(method) : () => fixed,
      refusal: this.options.drainRefusals?.[`${route.method} ${route.pattern}`] ?? SHUTTING_DOWN_REPLY,
    };
  }

  taken(): void {
    this.inFlight++;
  }

  done(): void {
    if (--this.inFlight === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  errorReply(error: unknown, requestId: string): Reply {
    if (error instanceof HttpError) return error.toReply();
    const passing = this.options.passingOutage?.(error);
    if (passing) {
      this.options.log.warn(
        { err: error, reqId: requestId },
        'request failed for a passing outage (the cluster out of reach, or a full disk)',
      );
      return passing.toReply();
    }
    this.options.log.error({ err: error, reqId: requestId }, 'unhandled error in route');
    return httpErrors.internal().toReply();
  }

  /**
   * Drain (see FrontDoor.drain) once the engine has stopped listening: requests are served (their answers close
   * the connection) until drainServeMs, refused after it; resolves true once nothing is in flight and nothing came
   * for drainQuietMs, false at `timeoutMs`. From then on everything is refused while the server stops.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.draining = true;
    this.lastRequestAt = Date.now();
    const deadline = Date.now() + timeoutMs;
    const serveMs = Math.min(this.options.drainServeMs ?? timeoutMs, timeoutMs);
    const serving = setTimeout(() => this.#stopServing(), serveMs);
    try {
      return await this.#quiet(deadline);
    } finally {
      clearTimeout(serving);
      this.refusing = true;
    }
  }

  #stopServing(): void {
    this.refusing = true;
    this.options.log.info(
      { inFlight: this.inFlight, serveMs: this.options.drainServeMs },
      'drain: serving deadline passed; refusing requests on open connections',
    );
  }

  async #quiet(deadline: number): Promise<boolean> {
    for (;;) {
      const quietFor = Date.now() - this.lastRequestAt;
      if (this.inFlight === 0 && quietFor >= this.options.drainQuietMs) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(
          resolve,
          this.inFlight > 0 ? left : Math.min(left, this.options.drainQuietMs - quietFor),
        );
        if (this.inFlight > 0) {
          this.#idleWaiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        }
      });
    }
  }
}

export const SHUTTING_DOWN = HttpError.of(
  503,
  'The server is shutting down; retry the request (on a new connection)',
  undefined,
  { 'Retry-After': '1' },
);
const SHUTTING_DOWN_REPLY = SHUTTING_DOWN.toReply();

/** The CORS preflight of any path. */
export const PREFLIGHT: Route = {
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

/** Any request no route matched. */
export const NOT_FOUND: Route = {
  method: 'GET',
  pattern: '/*',
  paramNames: [],
  handler: (req) => httpErrors.noRoute(req.method, req.path).toReply(),
};
