// Thread: main
// Socket.IO on the portable engine. Engine.IO is bound through a node:http server that never listens (its
// listeners are never called): the engine's own request and upgrade dispatch hands it the requests under
// SOCKET_IO_PATH once they pass the front door's rate limit for handshakes (requests without a `sid`), whose
// answer over the limit is 429 with Retry-After, as on uWS (Engine.IO's allowRequest would answer 403).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Server } from 'socket.io';
import type { HttpError } from './errors.js';
import { httpErrors } from './errors.js';
import { answerSocketAndClose } from './node-answer.js';
import { socketIoServer, type SocketIoOptions } from './socket-io.js';
import type { Admission } from './websocket.js';

interface EngineIo {
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  on(event: 'connection', listener: (socket: EngineIoSocket) => void): void;
}

/** What is read of an Engine.IO socket: its transport's `ws` socket, when it is the WebSocket transport. */
interface EngineIoSocket {
  transport?: { socket?: { bufferedAmount?: number; terminate?: () => void } };
  on(event: 'packetCreate', listener: () => void): void;
}

export class NodeSocketIo {
  readonly io: Server;
  /** Request paths that belong to Engine.IO (its `path`, as Engine.IO's own attach matches them). */
  readonly prefix: string;
  readonly #engine: EngineIo;

  constructor(
    options: SocketIoOptions,
    private readonly admission: Admission,
  ) {
    this.io = socketIoServer(options);
    this.io.attach(createServer());
    this.#engine = this.io.engine as unknown as EngineIo;
    this.prefix = `${options.path.replace(/\/$/, '')}/`;
    // As uWS's maxBackpressure: a WebSocket reader past the bound is closed, its buffer freed (a long-polling
    // one holds at most what a heartbeat interval brings, then misses the heartbeat and is closed).
    this.#engine.on('connection', (socket) => {
      socket.on('packetCreate', () => {
        const ws = socket.transport?.socket;
        if ((ws?.bufferedAmount ?? 0) > options.maxBackpressureBytes) ws?.terminate?.();
      });
    });
  }

  request(
    req: IncomingMessage,
    res: ServerResponse,
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    peer: string,
  ): void {
    this.#admit(
      rawQuery,
      headers,
      peer,
      () => this.#engine.handleRequest(req, res),
      (error, cors) => {
        if (res.headersSent) return;
        const answer = error.toReply();
        res.writeHead(answer.status, {
          'Content-Type': answer.contentType,
          ...answer.headers,
          ...Object.fromEntries(cors),
          Connection: 'close',
        });
        res.end(answer.body);
      },
    );
  }

  upgrade(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    peer: string,
  ): void {
    this.#admit(
      rawQuery,
      headers,
      peer,
      () => this.#engine.handleUpgrade(req, socket, head),
      (error, cors) => answerSocketAndClose(socket, error, cors),
    );
  }

  #admit(
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    peer: string,
    pass: () => void,
    refuse: (error: HttpError, cors: [string, string][]) => void,
  ): void {
    if (new URLSearchParams(rawQuery).has('sid')) return pass();
    const answer = (wait: number) =>
      wait > 0 ? refuse(httpErrors.tooManyRequests(wait), this.admission.corsHeaders(headers.origin)) : pass();
    const wait = this.admission.retryAfter(this.admission.clientAddress(peer, headers));
    // The shared count (cluster mode) never rejects: it falls back to this node's count.
    if (typeof wait === 'number') answer(wait);
    else void wait.then(answer);
  }
}
