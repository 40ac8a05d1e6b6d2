// Thread: main
// WebSocket routes on the uWS engine's app (see websocket.ts for the face-facing interface). uWS discipline:
// everything read from `req` is read before the first await, `res.onAborted` is registered before it, and the
// upgrade is written inside `res.cork`.
import type uWS from 'uWebSockets.js';
import { HttpError, httpErrors } from './errors.js';
import { readHeaders } from './headers.js';
import { statusLine } from './status-line.js';
import { uwsPeer } from './uws-peer.js';
import {
  FrameBudget,
  TOO_MANY_FRAMES,
  TOO_MANY_FRAMES_REASON,
  type SocketConnection,
  type SocketServing,
  type Subscriber,
  type Topics,
  type WebSocketLimits,
  type WebSocketRoute,
} from './websocket.js';

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
class Connection<T> implements SocketConnection<T>, Subscriber {
  /** Unset once closed: uWS throws on any use of a closed socket. */
  #ws?: uWS.WebSocket<{ connection: Connection<T> }>;
  /** Replaced, not pushed to: push and spread reserve 17 slots, concat allocates just the items. */
  topics: readonly string[] = [];
  /** The frames it may still send this second; past them it is closed and its frames are dropped. */
  readonly budget: FrameBudget;
  overBudget = false;

  constructor(
    readonly data: T,
    private readonly topicRegistry: Topics,
    private readonly overflowed: (bufferedBytes: number) => void,
    maxFramesPerSecond: number,
  ) {
    this.budget = new FrameBudget(maxFramesPerSecond);
  }

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

/** Registers `route` as a WebSocket route at `pattern` on `app`. */
export function mountWebSocket<T>(
  app: uWS.TemplatedApp,
  pattern: string,
  route: WebSocketRoute<T>,
  limits: WebSocketLimits,
  { admission, topics, log, limits: socketLimits }: SocketServing,
): void {
  const overflowed = (bufferedBytes: number) =>
    log.warn(
      { path: pattern, bufferedBytes, limitBytes: limits.maxBackpressureBytes },
      'WebSocket closed: its reader stopped reading (send buffer over the bound)',
    );
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
      const ip = admission.clientAddress(uwsPeer(res), headers);
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
            res.cork(() =>
              res.upgrade(
                { connection: new Connection(data, topics, overflowed, socketLimits.maxFramesPerSecond) },
                key,
                protocol,
                extensions,
                context,
              ),
            );
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
      const connection = ws.getUserData().connection;
      if (connection.overBudget) return;
      if (!connection.budget.take(Date.now())) {
        connection.overBudget = true;
        log.warn(
          { path: pattern, limitPerSecond: socketLimits.maxFramesPerSecond },
          'WebSocket closed: too many frames',
        );
        return ws.end(TOO_MANY_FRAMES, TOO_MANY_FRAMES_REASON);
      }
      // The ArrayBuffer is only valid during this call: decode it now.
      route.message(connection, isBinary ? undefined : textDecoder.decode(message));
    },
    close(ws, code) {
      const connection = ws.getUserData().connection;
      connection.detach();
      route.close(connection, code);
    },
  });
}
