// Thread: main
// The node link's listening side. Another node's router sends the calls for this node's partitions
// here, over one TCP connection per calling node, instead of through NATS request/reply (which costs both nodes'
// NATS clients and two NATS servers per call). A connection must first present this node's link token, which only
// a reader of the lease table (a NATS client of this deployment) can know; each call then gets its answer in a
// frame of its own, in whatever order the calls finish.
import { createServer, type Server, type Socket } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { setImmediate } from 'node:timers';
import { FrameReader, writeFrame } from './frames.js';
import type { AnswerFrame, CallFrame, HelloFrame, LinkAddress, WelcomeFrame } from './wire.js';

/** A connection that has not presented the token by then is dropped. */
const HELLO_TIMEOUT_MS = 2_000;
/** At most this many connections may be waiting to say hello; more are dropped at once (a flood of strangers). */
const MAX_UNGREETED = 64;
/** The longest a closing server waits for calls in flight to be answered before it drops their connections. */
const CLOSE_WAIT_MS = 2_000;

export interface LinkServerOptions {
  /** Address to listen on (and to advertise: other nodes connect to it). */
  host: string;
  /** 0: any free port. */
  port: number;
  token: string;
  /** Answers one call; never rejects (errors travel inside the answer). */
  answer(request: unknown): Promise<unknown>;
  /** A connection dropped for a bad token, a bad frame or a timeout (for the log). */
  onRefused?(reason: string, remote: string | undefined): void;
}

export class LinkServer {
  readonly #server: Server;
  /** Every open connection, greeted or not, with its calls in flight. */
  readonly #connections = new Map<Socket, { calls: number }>();
  #closing = false;
  #ungreeted = 0;

  private constructor(
    server: Server,
    readonly address: LinkAddress,
  ) {
    this.#server = server;
  }

  static async listen(options: LinkServerOptions): Promise<LinkServer> {
    const server = createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const bound = server.address();
    const port = typeof bound === 'object' && bound ? bound.port : options.port;
    const link = new LinkServer(server, { host: options.host, port, token: options.token });
    server.on('connection', (socket) => link.#accept(socket, options));
    return link;
  }

  /**
   * Stops accepting, waits (up to CLOSE_WAIT_MS) for the calls in flight to be answered, then drops every
   * connection. Called after the node left the leases, so calls still arriving are answered "moved" meanwhile.
   */
  async close(): Promise<void> {
    this.#closing = true;
    this.#server.close();
    const giveUpAt = Date.now() + CLOSE_WAIT_MS;
    const busy = () => [...this.#connections.values()].some((state) => state.calls > 0);
    while (busy() && Date.now() < giveUpAt) await new Promise((resolve) => setTimeout(resolve, 10));
    // The last answers leave in this iteration's check phase (frames.ts): end the connections after it. A caller
    // that does not close its side then is cut at the bound.
    await new Promise((resolve) => setImmediate(resolve));
    const sockets = [...this.#connections.keys()];
    const ended = sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve).end()));
    await Promise.race([Promise.all(ended), new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
    for (const socket of sockets) socket.destroy();
  }

  #accept(socket: Socket, options: LinkServerOptions): void {
    const refuse = (reason: string) => {
      options.onRefused?.(reason, socket.remoteAddress);
      socket.destroy();
    };
    if (this.#closing) return void socket.destroy();
    if (this.#ungreeted >= MAX_UNGREETED) return refuse(`over ${MAX_UNGREETED} connections waiting to say hello`);
    const state = { calls: 0 };
    this.#connections.set(socket, state);
    this.#ungreeted++;
    let greeted = false;
    const hello = setTimeout(() => refuse('no hello in time'), HELLO_TIMEOUT_MS);
    hello.unref();
    const reader = new FrameReader((frame) => {
      if (!greeted) {
        if (!tokenMatches((frame as HelloFrame).token, options.token)) return refuse('wrong token');
        greeted = true;
        this.#ungreeted--;
        clearTimeout(hello);
        writeFrame(socket, { welcome: true } satisfies WelcomeFrame);
        return;
      }
      const { id, request } = frame as CallFrame;
      if (typeof id !== 'number') return refuse('a call without an id');
      state.calls++;
      options.answer(request).then(
        (answer) => {
          state.calls--;
          if (!socket.destroyed) writeFrame(socket, { id, answer } satisfies AnswerFrame);
        },
        (error: unknown) => {
          state.calls--;
          refuse(`a call could not be answered: ${(error as Error).message}`);
        },
      );
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (error) {
        refuse((error as Error).message);
      }
    });
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => {
      clearTimeout(hello);
      if (!greeted) this.#ungreeted--;
      this.#connections.delete(socket);
    });
  }
}

function tokenMatches(given: unknown, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
