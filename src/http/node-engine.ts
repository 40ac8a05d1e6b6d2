// Thread: main
// The portable engine: the front door on node:http (`ws` for WebSocket routes, Socket.IO attached through
// Engine.IO's node API). Same routes, steps and answers as the uWS engine (door-core.ts, exchange.ts); it runs
// on any Node.js and also answers what uWS cannot: HTTP/1.0 clients, and malformed request lines (400).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Server as SocketIoServer } from 'socket.io';
import { BoundedMap } from '../base/bounded-map.js';
import { bodyText } from './body.js';
import { normalizeAddress } from './client-address.js';
import { DoorCore, NOT_FOUND, PREFLIGHT, SHUTTING_DOWN, type RouteSteps } from './door-core.js';
import { httpErrors } from './errors.js';
import { Exchange, NO_PARAMS, safeDecode } from './exchange.js';
import type { FrontDoor, HttpEngine, HttpServerOptions } from './front-door.js';
import { readRawHeaders } from './headers.js';
import { answerSocketAndClose } from './node-answer.js';
import { answerClientError } from './node-client-error.js';
import { SegmentRouter } from './node-router.js';
import { NodeSocketIo } from './node-socket-io.js';
import { NodeWebSocketRoute } from './node-websocket.js';
import type { Router } from './router.js';
import { limitSocketIoFrames, type SocketIoOptions } from './socket-io.js';
import { openStreamWriter } from './stream.js';
import type { Reply, StreamWriter } from './types.js';
import type { WebSocketLimits, WebSocketRoute } from './websocket.js';

/** uWS closes a keep-alive connection idle for 10 s, and one whose headers or body do not come: the same here. */
const KEEP_ALIVE_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** How often node:http looks for requests past their time (its default, 30 s, let a slow client stay 3x too long). */
const TIMEOUT_CHECK_MS = 1_000;
/** node:http's limit on the request line and headers (as uWS's 4 KB, a bigger one is refused). */
const MAX_HEADER_BYTES = 16 * 1024;

class NodeExchange extends Exchange {
  constructor(
    door: DoorCore,
    steps: RouteSteps,
    method: string,
    path: string,
    rawQuery: string,
    headers: Record<string, string>,
    params: Record<string, string>,
    peer: string,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    super(door, steps, method, path, rawQuery, headers, params, peer);
    res.once('close', () => {
      if (!res.writableFinished) this.clientGone();
    });
  }

  protected write(reply: Reply, closeConnection: boolean): void {
    const head: string[] = ['Content-Type', reply.contentType, 'X-Request-Id', this.requestId];
    for (const [name, value] of this.cors) head.push(name, value);
    if (reply.headers) for (const name in reply.headers) head.push(name, reply.headers[name]);
    if (closeConnection) head.push('Connection', 'close');
    // As uWS: a HEAD answer says Content-Length 0 (node:http leaves its body out itself).
    const body = this.method === 'HEAD' ? '' : reply.body;
    head.push('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
    this.res.writeHead(reply.status, head);
    this.res.end(body);
  }

  protected readBody(limit: number): void {
    const chunks: Buffer[] = [];
    let size = 0;
    this.req.on('data', (chunk: Buffer) => {
      if (this.finished) return;
      size += chunk.byteLength;
      if (size > limit) return this.tooLarge();
      chunks.push(chunk);
    });
    this.req.once('end', () => {
      if (!this.finished && size <= limit)
        this.bodyRead(bodyText(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    });
  }

  protected openStream(status: number, headers: Record<string, string>): StreamWriter {
    const res = this.res;
    const signal = this.signal();
    const { writer, closed } = openStreamWriter(
      {
        write: (chunk) => res.write(chunk),
        onWritable: (listener) => res.on('drain', listener),
        end: () => res.end(),
        destroy: () => res.destroy(), // 'close' -> clientGone -> signal -> closed()
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
      const head: string[] = [];
      for (const name in headers) head.push(name, headers[name]);
      for (const [name, value] of this.cors) head.push(name, value);
      if (this.door.draining) head.push('Connection', 'close');
      res.writeHead(status, head);
      res.flushHeaders();
    }
    return writer;
  }
}

export class NodeFrontDoor implements FrontDoor {
  readonly engine: HttpEngine = { name: 'node', version: process.versions.node };
  readonly server: Server;
  readonly #core: DoorCore;
  readonly #routes = new SegmentRouter<RouteSteps>();
  readonly #sockets = new SegmentRouter<NodeWebSocketRoute<unknown>>();
  readonly #socketRoutes: NodeWebSocketRoute<unknown>[] = [];
  /** Upgraded connections: node:http no longer tracks them, and close() must end them too. */
  readonly #upgraded = new Set<Duplex>();
  /** Normalised peer addresses; past the limit the oldest goes, one at a time (a flood never empties it). */
  readonly #peers = new BoundedMap<string, string>(10_000);
  #socketIo: NodeSocketIo | undefined;
  #preflight!: RouteSteps;
  #notFound!: RouteSteps;
  #listening = false;

  constructor(private readonly options: HttpServerOptions) {
    this.#core = new DoorCore(options, 'node');
    const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    const requestTimeoutMs = Math.max(options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS, headersTimeoutMs);
    this.server = createServer(
      {
        keepAliveTimeout: KEEP_ALIVE_MS,
        headersTimeout: headersTimeoutMs,
        requestTimeout: requestTimeoutMs,
        connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, headersTimeoutMs),
        maxHeaderSize: MAX_HEADER_BYTES,
        noDelay: true,
      },
      (req, res) => this.#request(req, res),
    );
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#upgrade(req, socket, head));
    const limits = { maxHeaderBytes: MAX_HEADER_BYTES, headersTimeoutMs, requestTimeoutMs };
    this.server.on('clientError', (error: Error, socket: Duplex) => answerClientError(error, socket, limits));
  }

  get port(): number {
    return this.#listening ? (this.server.address() as AddressInfo).port : 0;
  }

  get inFlight(): number {
    return this.#core.inFlight;
  }

  websocket<T>(pattern: string, route: WebSocketRoute<T>, limits: WebSocketLimits): void {
    const socketRoute = new NodeWebSocketRoute(pattern, route, limits, this.#core.sockets);
    this.#sockets.add('GET', pattern, socketRoute as NodeWebSocketRoute<unknown>);
    this.#socketRoutes.push(socketRoute as NodeWebSocketRoute<unknown>);
  }

  socketIo(options: Omit<SocketIoOptions, 'corsOrigin'>): SocketIoServer {
    this.#socketIo = new NodeSocketIo({ ...options, corsOrigin: this.options.corsOrigin }, this.#core.admission);
    limitSocketIoFrames(this.#socketIo.io, this.#core.sockets.limits, this.options.log);
    return this.#socketIo.io;
  }

  publish(topic: string, text: string): void {
    this.#core.sockets.topics.publish(topic, text);
  }

  mount(router: Router): void {
    for (const route of router.routes) {
      const steps = this.#core.steps(route);
      this.#routes.add(route.method, route.pattern, steps);
      // HEAD wherever GET: the same steps, the answer without its body (NodeExchange.write).
      if (route.method === 'GET') this.#routes.add('HEAD', route.pattern, steps);
    }
    this.#preflight = this.#core.steps(PREFLIGHT);
    this.#notFound = this.#core.steps(NOT_FOUND);
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (error: Error) =>
        reject(new Error(`Cannot listen on ${this.options.host}:${this.options.port}: ${error.message}`));
      this.server.once('error', failed);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', failed);
        this.#listening = true;
        resolve(this.port);
      });
    });
  }

  drain(timeoutMs: number): Promise<boolean> {
    // net.Server's close, not http.Server's: that one also closes idle keep-alive connections, whose next
    // request must get the 503 that sends its client elsewhere (as on uWS).
    if (this.#listening) NetServer.prototype.close.call(this.server);
    this.#listening = false;
    return this.#core.drain(timeoutMs);
  }

  close(): void {
    if (this.#listening) NetServer.prototype.close.call(this.server);
    this.#listening = false;
    this.server.closeAllConnections();
    for (const route of this.#socketRoutes) route.close();
    for (const socket of this.#upgraded) socket.destroy();
  }

  #peer(address: string | undefined): string {
    if (!address) return '';
    let peer = this.#peers.get(address);
    if (peer === undefined) {
      peer = normalizeAddress(address);
      this.#peers.set(address, peer);
    }
    return peer;
  }

  #request(req: IncomingMessage, res: ServerResponse): void {
    const url = originForm(req.url ?? '/');
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const rawQuery = mark < 0 ? '' : url.slice(mark + 1);
    const headers = readRawHeaders(req.rawHeaders);
    const peer = this.#peer(req.socket.remoteAddress);
    if (this.#socketIo && path.startsWith(this.#socketIo.prefix))
      return this.#socketIo.request(req, res, rawQuery, headers, peer);
    const method = req.method ?? 'GET';
    const found = this.#routes.match(method, path);
    let steps: RouteSteps;
    let params = NO_PARAMS;
    if (found) {
      steps = found.value;
      if (steps.paramNames.length > 0) {
        params = Object.create(null); // keyed by route names, valued by the client
        for (let i = 0; i < steps.paramNames.length; i++) params[steps.paramNames[i]] = safeDecode(found.params[i]);
      }
    } else {
      steps = method === 'OPTIONS' ? this.#preflight : this.#notFound;
    }
    new NodeExchange(this.#core, steps, method, path, rawQuery, headers, params, peer, req, res).begin();
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#upgraded.add(socket);
    socket.once('close', () => this.#upgraded.delete(socket));
    const url = originForm(req.url ?? '/');
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const rawQuery = mark < 0 ? '' : url.slice(mark + 1);
    const headers = readRawHeaders(req.rawHeaders);
    const peer = this.#peer(req.socket.remoteAddress);
    if (this.#core.draining) return answerSocketAndClose(socket, SHUTTING_DOWN);
    if (this.#socketIo && path.startsWith(this.#socketIo.prefix))
      return this.#socketIo.upgrade(req, socket, head, rawQuery, headers, peer);
    const route = req.method === 'GET' ? this.#sockets.match('GET', path) : undefined;
    if (route) return route.value.handle(req, socket, head, headers, peer, rawQuery);
    answerSocketAndClose(socket, httpErrors.notFound(`Cannot ${req.method} ${path}`));
  }
}

/** A request target in absolute form (`http://host/path?q`, which HTTP/1.1 servers must accept) as origin form. */
function originForm(target: string): string {
  if (target[0] === '/') return target;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return target;
  }
}
