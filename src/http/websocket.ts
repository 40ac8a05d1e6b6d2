// WebSocket routes on the front door's uWS app, behind a face-facing interface: a face says how to accept a
// handshake and what to do with frames; this module does the uWS part (asynchronous upgrade, corking,
// backpressure, idle timeout, frame size). uWS discipline: everything read from `req` is read before the
// first await, `res.onAborted` is registered before it, and the upgrade is written inside `res.cork`.
import type { Server as SocketIoServer } from 'socket.io';
import type uWS from 'uWebSockets.js';
import type { Logger } from '../log.js';
import { HttpError, httpErrors } from './errors.js';
import { readHeaders } from './headers.js';
import { statusLine } from './status-line.js';
import type { SocketIoOptions } from './socket-io.js';

/** What a face that accepts WebSockets gets of the front door (HttpServer implements it). */
export interface SocketFrontDoor {
  websocket<T>(pattern: string, route: WebSocketRoute<T>, limits: WebSocketLimits): void;
  /** Socket.IO on the same app; CORS as for HTTP. */
  socketIo(options: Omit<SocketIoOptions, 'corsOrigin'>): SocketIoServer;
  /** Sends a text frame to every WebSocket subscribed to `topic`. */
  publish(topic: string, text: string): void;
}

/** What a face sees of a WebSocket handshake. */
export interface SocketHandshake {
  readonly path: string;
  readonly query: URLSearchParams;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly ip: string;
}

/** One open WebSocket, valid from `open` to `close`. */
export interface SocketConnection<T> {
  readonly data: T;
  /** Bytes waiting in the socket's backpressure buffer. */
  readonly bufferedAmount: number;
  /** Sends a text frame; a send past the backpressure limit closes the socket (closeOnBackpressureLimit). */
  send(text: string): void;
  subscribe(topic: string): void;
  /** Closes with a close frame (code and a short reason). */
  end(code: number, reason: string): void;
}

export interface WebSocketRoute<T> {
  /**
   * Decides a handshake: resolves with the socket's data, or rejects with an HttpError whose answer refuses it
   * (any other error answers 500). Runs before the connection is accepted.
   */
  accept(handshake: SocketHandshake): Promise<T>;
  open(socket: SocketConnection<T>): void;
  /** One frame: its text, or undefined for a binary frame. */
  message(socket: SocketConnection<T>, text: string | undefined): void;
  close(socket: SocketConnection<T>, code: number): void;
  /** A handshake failed with an error that was not an HttpError. */
  failed?(error: unknown): void;
}

export interface WebSocketLimits {
  /** Seconds without any frame from the client (pongs count) before the socket is closed; uWS pings before that. */
  idleTimeoutSeconds: number;
  /** Largest frame accepted; a bigger one closes the socket (code 1009). */
  maxPayloadBytes: number;
  /** Bytes buffered for a slow reader before a send is dropped and the socket closed (WS_MAX_BACKPRESSURE_BYTES). */
  maxBackpressureBytes: number;
}

/** The front-door checks a handshake shares with HTTP requests. */
export interface Admission {
  /** The client's address from the socket's peer and the headers (X-Forwarded-For when trusted). */
  clientAddress(res: uWS.HttpResponse, headers: Readonly<Record<string, string>>): string;
  /**
   * 0 when allowed, else the seconds until the rate-limit window resets: at once on one node, a promise of the
   * count every node shares in cluster mode.
   */
  retryAfter(ip: string): number | Promise<number>;
  /** The CORS headers of HTTP answers for a request from `origin`, so a browser can read a refusal (a 429 to a Socket.IO poll). */
  corsHeaders(origin: string | undefined): [string, string][];
}

const textDecoder = new TextDecoder();

/** Answers a refused handshake with `error`'s answer (and the request's CORS headers) and closes the connection. */
export function answerAndClose(res: uWS.HttpResponse, error: HttpError, cors: readonly [string, string][] = []): void {
  const answer = error.toReply();
  res.cork(() => {
    res.writeStatus(statusLine(answer.status));
    res.writeHeader('Content-Type', answer.contentType);
    for (const name in answer.headers) res.writeHeader(name, answer.headers[name]);
    for (const [name, value] of cors) res.writeHeader(name, value);
    res.end(answer.body, true);
  });
}

/** uWS's `send` result when the frame was dropped: the socket's buffer is over maxBackpressure. */
const DROPPED = 2;

/**
 * One socket's state (uWS's user data holds it: uWS copies the user data's properties into an object of its
 * own). Held per idle socket, so kept small: its topics are an array (a socket follows one session, at most a
 * few dozen), not a Set (~150 bytes more each).
 */
class Connection<T> implements SocketConnection<T> {
  /** Unset once closed: uWS throws on any use of a closed socket. */
  #ws?: uWS.WebSocket<{ connection: Connection<T> }>;
  /** Replaced, not pushed to: push and spread reserve 17 slots, concat allocates just the items. */
  topics: readonly string[] = [];

  constructor(
    readonly data: T,
    private readonly topicRegistry: Topics,
    private readonly overflowed: (bufferedBytes: number) => void,
  ) {}

  attach(ws: uWS.WebSocket<{ connection: Connection<T> }>): void {
    this.#ws = ws;
  }

  detach(): void {
    this.#ws = undefined;
    this.topicRegistry.leaveAll(this);
  }

  get bufferedAmount(): number {
    return this.#ws?.getBufferedAmount() ?? 0;
  }

  send(text: string): void {
    const ws = this.#ws;
    if (!ws || ws.send(text, false) !== DROPPED) return;
    // A reader this far behind (or one that never reads) is closed at once: its buffer is freed now, and a chat
    // client must not silently miss a tool call.
    this.overflowed(ws.getBufferedAmount());
    ws.close();
  }

  subscribe(topic: string): void {
    if (this.#ws) this.topicRegistry.join(this, topic);
  }

  end(code: number, reason: string): void {
    this.#ws?.end(code, reason);
  }
}

/** The sockets subscribed to one topic. */
class TopicMembers extends Set<Connection<unknown>> {
  constructor(readonly topic: string) {
    super();
  }
}

/**
 * Topics of the WebSocket routes (one per chat session: a few sockets each). A publish goes through each
 * socket's `send` rather than uWS's native publish, which closes a socket over its bound without telling anyone.
 */
export class Topics {
  readonly #members = new Map<string, TopicMembers>();

  join(connection: Connection<unknown>, topic: string): void {
    let members = this.#members.get(topic);
    if (!members) this.#members.set(topic, (members = new TopicMembers(topic)));
    members.add(connection);
    // The topic's one string, not the caller's copy (sockets of a session share it).
    if (!connection.topics.includes(topic)) connection.topics = connection.topics.concat(members.topic);
  }

  leaveAll(connection: Connection<unknown>): void {
    for (const topic of connection.topics) {
      const members = this.#members.get(topic);
      members?.delete(connection);
      if (members?.size === 0) this.#members.delete(topic);
    }
    connection.topics = [];
  }

  publish(topic: string, text: string): void {
    const members = this.#members.get(topic);
    // No copy per event: a send that closes its socket removes it from `members` mid-loop, which a Set's
    // iterator tolerates (the rest are still visited once).
    if (members) for (const connection of members) connection.send(text);
  }
}

/** Registers `route` as a WebSocket route at `pattern` on `app`. */
export function mountWebSocket<T>(
  app: uWS.TemplatedApp,
  pattern: string,
  route: WebSocketRoute<T>,
  limits: WebSocketLimits,
  admission: Admission,
  topics: Topics,
  log: Logger,
): void {
  const overflowed = (bufferedBytes: number) =>
    log.warn({ path: pattern, bufferedBytes, limitBytes: limits.maxBackpressureBytes }, 'WebSocket closed: its reader stopped reading (send buffer over the bound)');
  app.ws<{ connection: Connection<T> }>(pattern, {
    idleTimeout: limits.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    maxPayloadLength: limits.maxPayloadBytes,
    maxBackpressure: limits.maxBackpressureBytes,
    // A send past the bound is dropped (and the socket closed, see Connection.send).
    closeOnBackpressureLimit: 1,
    upgrade(res, req, context) {
      const headers = readHeaders(req);
      const path = req.getUrl();
      const query = new URLSearchParams(req.getQuery() ?? '');
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const ip = admission.clientAddress(res, headers);
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      const refuse = (error: HttpError) => {
        if (!aborted) answerAndClose(res, error, admission.corsHeaders(headers.origin));
      };
      const admitted = (wait: number) => {
        if (wait > 0) return refuse(httpErrors.tooManyRequests(wait));
        if (aborted) return;
        route.accept({ path, query, headers, ip }).then(
          (data) => {
            if (aborted) return;
            res.cork(() => res.upgrade({ connection: new Connection(data, topics, overflowed) }, key, protocol, extensions, context));
          },
          (error: unknown) => {
            if (error instanceof HttpError) return refuse(error);
            route.failed?.(error);
            refuse(httpErrors.internal());
          },
        );
      };
      // Cluster mode: the count every node shares is awaited, as for HTTP requests (it never rejects: it falls
      // back to this node's count).
      const wait = admission.retryAfter(ip);
      if (typeof wait === 'number') admitted(wait);
      else void wait.then(admitted);
    },
    open(ws) {
      const connection = ws.getUserData().connection;
      connection.attach(ws);
      route.open(connection);
    },
    message(ws, message, isBinary) {
      // The ArrayBuffer is only valid during this call: decode it now.
      route.message(ws.getUserData().connection, isBinary ? undefined : textDecoder.decode(message));
    },
    close(ws, code) {
      const connection = ws.getUserData().connection;
      connection.detach();
      route.close(connection, code);
    },
  });
}
