// Thread: main
// WebSocket routes behind a face-facing interface: a face says how to accept a handshake and what to do with
// frames; each engine does the socket part (uws-websocket.ts, node-websocket.ts): asynchronous upgrade,
// backpressure, idle timeout, frame size. The topics (publish to a session's sockets) are shared.
import type { Server as SocketIoServer } from 'socket.io';
import type { Logger } from '../base/log.js';
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

/** What the front door holds every socket to, whatever its route (HttpServerOptions.socketLimits). */
export interface SocketLimits {
  /** Frames (Socket.IO: packets) a client may send per second before its socket is closed (1008). */
  maxFramesPerSecond: number;
}

/** The default of WS_MAX_FRAMES_PER_SECOND. */
export const DEFAULT_SOCKET_LIMITS: SocketLimits = { maxFramesPerSecond: 100 };

/** Close code of a socket that sent more frames than its budget (RFC 6455: policy violation). */
export const TOO_MANY_FRAMES = 1008;
export const TOO_MANY_FRAMES_REASON = 'too many frames';

/**
 * The frames one socket may send per second (WS_MAX_FRAMES_PER_SECOND, on /ws and Socket.IO alike): a socket past
 * it is closed, so a client flooding frames (never reading the answers) costs the main thread a bounded amount.
 */
export class FrameBudget {
  #windowStart = 0;
  #count = 0;

  constructor(private readonly perSecond: number) {}

  /** Counts a frame; false once the socket sent more than its budget within the current second. */
  take(now: number): boolean {
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#count = 0;
    }
    return ++this.#count <= this.perSecond;
  }
}

/** The front-door checks a handshake shares with HTTP requests. */
export interface Admission {
  /** The client's address from the socket's peer and the headers (X-Forwarded-For when trusted). */
  clientAddress(peer: string, headers: Readonly<Record<string, string>>): string;
  /**
   * 0 when allowed, else the seconds until the rate-limit window resets: at once on one node, a promise of the
   * count every node shares in cluster mode.
   */
  retryAfter(ip: string): number | Promise<number>;
  /** The CORS headers of HTTP answers for a request from `origin`, so a browser can read a refusal (a 429 to a Socket.IO poll). */
  corsHeaders(origin: string | undefined): [string, string][];
}

/** A socket as the topics see it (each engine's connection). */
export interface Subscriber {
  /** Replaced, not pushed to: push and spread reserve 17 slots, concat allocates just the items. */
  topics: readonly string[];
  send(text: string): void;
}

/** The sockets subscribed to one topic. */
class TopicMembers extends Set<Subscriber> {
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

  join(connection: Subscriber, topic: string): void {
    let members = this.#members.get(topic);
    if (!members) this.#members.set(topic, (members = new TopicMembers(topic)));
    members.add(connection);
    // The topic's one string, not the caller's copy (sockets of a session share it).
    if (!connection.topics.includes(topic)) connection.topics = connection.topics.concat(members.topic);
  }

  leaveAll(connection: Subscriber): void {
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

/** What every WebSocket route of an engine shares: who is admitted, the topics, the log and the socket limits. */
export interface SocketServing {
  readonly admission: Admission;
  readonly topics: Topics;
  readonly log: Logger;
  readonly limits: SocketLimits;
}
