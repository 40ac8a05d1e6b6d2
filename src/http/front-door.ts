// Thread: any
// The front door as the rest of the server sees it: one interface, two engines (uws-engine.ts on
// uWebSockets.js, node-engine.ts on node:http). Nothing outside src/http/ knows which one serves.
import type { Logger } from '../base/log.js';
import type { HttpError } from './errors.js';
import type { ProxyTrust } from './proxy-trust.js';
import type { SharedRateLimit } from './rate-limit.js';
import type { Router } from './router.js';
import type { Reply } from './types.js';
import type { UwsBuild } from './uws-native.js';
import type { SocketFrontDoor, SocketLimits } from './websocket.js';

/** HTTP_ENGINE: `auto` takes uWS when a native build loads here, else the portable engine. */
export type HttpEngineChoice = 'auto' | 'uws' | 'node';

/** The engine serving, as logged at start-up and reported by /health and /metrics. */
export type HttpEngine = { name: 'uws'; build: UwsBuild; version: string } | { name: 'node'; version: string };

export interface HttpServerOptions {
  host: string;
  port: number;
  bodyLimitBytes: number;
  corsOrigin: string;
  /** Unset: X-Forwarded-For is ignored and the socket peer is the client. */
  proxyTrust?: ProxyTrust;
  /**
   * The rate limit; requests from `allowlist` addresses, and requests carrying `Authorization: Bearer <exemptToken>`
   * (OPERATOR_TOKEN: probes and scrapes), are not counted.
   */
  rateLimit: { max: number; windowSeconds: number; allowlist: string[]; exemptToken?: string };
  /**
   * Cluster mode: HTTP requests and handshakes are counted by every node together (a request or handshake waits
   * for the count; this node's own count answers when the shared one fails). Unset: the synchronous in-memory count.
   */
  sharedRateLimit?: SharedRateLimit;
  /**
   * An error no route answered that means a passing outage (cluster mode: NATS out of reach; DATA_DIR's disk full)
   * gets this answer (a 503 with Retry-After) instead of the 500 of an unexpected error.
   */
  passingOutage?: (error: unknown) => HttpError | undefined;
  /** While draining, the server stays up until no request has arrived for this long (see drain). */
  drainQuietMs: number;
  /** How long the drain serves requests on open connections before it refuses them (default: the whole drain). */
  drainServeMs?: number;
  /**
   * A route's own answer to a request refused by the drain, by `METHOD /pattern` (the USSD route: its END text);
   * any other route answers the JSON 503.
   */
  drainRefusals?: Readonly<Record<string, Reply>>;
  /**
   * The portable engine: a request's headers must arrive within headersTimeoutMs of its first byte and the whole
   * request, its body included, within requestTimeoutMs (at least headersTimeoutMs), else 408 and the connection
   * closed (checked every second). uWS's bound is its own: about 10 s (HTTP_HEADERS_TIMEOUT_MS,
   * HTTP_REQUEST_TIMEOUT_MS; default 10 s each).
   */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Bounds of every WebSocket and Socket.IO socket (default DEFAULT_SOCKET_LIMITS). */
  socketLimits?: SocketLimits;
  /** Bounds of a streamed answer (SSE) whose reader stops reading; past either, the stream is closed. */
  streamLimits: StreamLimits;
  log: Logger;
  /** Count and time every request for /metrics (METRICS_ENABLED). */
  metrics?: boolean;
  /** Default `auto`. */
  engine?: HttpEngineChoice;
}

export interface StreamLimits {
  /** Bytes written to a stream since the socket last took data (SSE_MAX_BUFFER_BYTES). */
  maxBufferBytes: number;
  /** How long a stream may stay unable to send (SSE_STALL_TIMEOUT_SECONDS). */
  stallTimeoutMs: number;
}

export interface FrontDoor extends SocketFrontDoor {
  readonly engine: HttpEngine;
  /** The port listened on (0 before listen and after drain began). */
  readonly port: number;
  /** Requests taken and not yet answered (open streams included). */
  readonly inFlight: number;
  /** Mounts every route of the router, the CORS preflight and the JSON 404. */
  mount(router: Router): void;
  listen(): Promise<number>;
  /**
   * Stops accepting connections. A request that still arrives on an open (keep-alive) connection is served, its
   * answer with Connection: close (so its client moves to another node), until drainServeMs; after that it is
   * refused (503 with Retry-After and Connection: close, or its route's drainRefusals answer), never reset.
   * Resolves once nothing is in flight and no request has come for drainQuietMs, or false when the timeout passes.
   */
  drain(timeoutMs: number): Promise<boolean>;
  /** Closes every remaining connection. */
  close(): void;
}
