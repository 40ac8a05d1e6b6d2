// Thread: main
// WebSocket routes on the portable engine, with `ws` (see websocket.ts for the face-facing interface). The
// same contract as uws-websocket.ts: the rate limit and the face's accept before the handshake completes, a
// send past the backpressure bound closes the socket, frames over maxPayloadBytes close it (1009), and a
// socket silent for idleTimeoutSeconds is closed after being pinged, and one sending more frames a second than
// its budget is closed (1008) and no longer read.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { HttpError, httpErrors } from './errors.js';
import { answerSocketAndClose } from './node-answer.js';
import {
  FrameBudget,
  TOO_MANY_FRAMES,
  TOO_MANY_FRAMES_REASON,
  type SocketConnection,
  type SocketHandshake,
  type SocketServing,
  type Subscriber,
  type Topics,
  type WebSocketLimits,
  type WebSocketRoute,
} from './websocket.js';

/** How long a socket closed for its frames may take to finish the close handshake before it is cut. */
const CLOSE_GRACE_MS = 1_000;

class Connection<T> implements SocketConnection<T>, Subscriber {
  topics: readonly string[] = [];
  /** When a frame (or pong) last came: the idle check's clock. */
  lastSeen = Date.now();
  #open = true;

  constructor(
    readonly data: T,
    private readonly ws: WebSocket,
    private readonly topicRegistry: Topics,
    private readonly maxBackpressureBytes: number,
    private readonly overflowed: (bufferedBytes: number) => void,
  ) {}

  get bufferedAmount(): number {
    return this.#open ? this.ws.bufferedAmount : 0;
  }

  send(text: string): void {
    if (!this.#open) return;
    if (this.ws.bufferedAmount > this.maxBackpressureBytes) {
      // As on uWS: a reader this far behind is closed at once, not silently skipped.
      this.overflowed(this.ws.bufferedAmount);
      this.ws.terminate();
      return;
    }
    this.ws.send(text);
  }

  subscribe(topic: string): void {
    if (this.#open) this.topicRegistry.join(this, topic);
  }

  end(code: number, reason: string): void {
    if (this.#open) this.ws.close(code, reason);
  }

  detach(): void {
    this.#open = false;
    this.topicRegistry.leaveAll(this);
  }
}

/** One WebSocket route: `handle` takes an upgrade request for its path. */
export class NodeWebSocketRoute<T> {
  readonly #wss: WebSocketServer;
  readonly #live = new Set<{ connection: Connection<T>; ws: WebSocket }>();
  readonly #idleCheck: NodeJS.Timeout;

  constructor(
    private readonly pattern: string,
    private readonly route: WebSocketRoute<T>,
    private readonly limits: WebSocketLimits,
    private readonly serving: SocketServing,
  ) {
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: limits.maxPayloadBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    const idleMs = limits.idleTimeoutSeconds * 1000;
    this.#idleCheck = setInterval(() => this.#checkIdle(idleMs), Math.max(250, idleMs / 4));
    this.#idleCheck.unref();
  }

  handle(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    headers: Readonly<Record<string, string>>,
    peer: string,
    rawQuery: string,
  ): void {
    const ip = this.serving.admission.clientAddress(peer, headers);
    let aborted = false;
    socket.once('close', () => {
      aborted = true;
    });
    const refuse = (error: HttpError) => {
      if (!aborted) answerSocketAndClose(socket, error, this.serving.admission.corsHeaders(headers.origin));
    };
    const handshake: SocketHandshake = { path: this.pattern, query: new URLSearchParams(rawQuery), headers, ip };
    const admitted = (wait: number) => {
      if (wait > 0) return refuse(httpErrors.tooManyRequests(wait));
      if (aborted) return;
      this.route.accept(handshake).then(
        (data) => {
          if (!aborted) this.#wss.handleUpgrade(req, socket, head, (ws) => this.#open(ws, data));
        },
        (error: unknown) => {
          if (error instanceof HttpError) return refuse(error);
          this.route.failed?.(error);
          refuse(httpErrors.internal());
        },
      );
    };
    const wait = this.serving.admission.retryAfter(ip);
    if (typeof wait === 'number') admitted(wait);
    else void wait.then(admitted);
  }

  #open(ws: WebSocket, data: T): void {
    const overflowed = (bufferedBytes: number) =>
      this.serving.log.warn(
        { path: this.pattern, bufferedBytes, limitBytes: this.limits.maxBackpressureBytes },
        'WebSocket closed: its reader stopped reading (send buffer over the bound)',
      );
    const connection = new Connection(data, ws, this.serving.topics, this.limits.maxBackpressureBytes, overflowed);
    const entry = { connection, ws };
    this.#live.add(entry);
    const budget = new FrameBudget(this.serving.limits.maxFramesPerSecond);
    let overBudget = false;
    ws.on('message', (message, isBinary) => {
      // Frames already read past the budget (one read can hold hundreds) are dropped with their socket.
      if (overBudget) return;
      const now = Date.now();
      connection.lastSeen = now;
      if (!budget.take(now)) {
        overBudget = true;
        return this.#tooManyFrames(ws);
      }
      this.route.message(connection, isBinary ? undefined : message.toString());
    });
    ws.on('pong', () => {
      connection.lastSeen = Date.now();
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', (code) => {
      this.#live.delete(entry);
      connection.detach();
      this.route.close(connection, code);
    });
    this.route.open(connection);
  }

  #tooManyFrames(ws: WebSocket): void {
    this.serving.log.warn(
      { path: this.pattern, limitPerSecond: this.serving.limits.maxFramesPerSecond },
      'WebSocket closed: too many frames',
    );
    ws.close(TOO_MANY_FRAMES, TOO_MANY_FRAMES_REASON);
    // Nothing more is read from it: a flooding client's frames wait in its own buffers, not on the main thread.
    ws.pause();
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  #checkIdle(idleMs: number): void {
    const now = Date.now();
    for (const { connection, ws } of this.#live) {
      const silentFor = now - connection.lastSeen;
      if (silentFor >= idleMs) ws.terminate();
      else if (silentFor >= idleMs / 2) ws.ping();
    }
  }

  close(): void {
    clearInterval(this.#idleCheck);
    for (const { ws } of this.#live) ws.terminate();
  }
}
