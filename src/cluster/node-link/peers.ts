// Thread: main
// The node link's calling side. One TCP connection per other node, opened on the first call to it and
// kept; calls made before it is ready wait in a queue. A call fails in one of two ways the router tells apart:
// LinkNotDeliveredError when it never left this node (no connection, or refused: the router sends it through NATS
// instead), LinkLostError when the connection dropped after it was sent (the other node may have run it: not
// retried, as for a node dying with a NATS call in flight).
import { connect, type Socket } from 'node:net';
import { FrameReader, writeFrame } from './frames.js';
import type { AnswerFrame, CallFrame, HelloFrame, LinkAddress } from './wire.js';

/** Opening a connection and its hello answered within this, or the node counts as unreachable by link. */
const CONNECT_TIMEOUT_MS = 1_000;
/** After a failed opening, calls to that node go through NATS for this long before the link is tried again. */
const RETRY_AFTER_MS = 1_000;

export class LinkNotDeliveredError extends Error {
  override name = 'LinkNotDeliveredError';
}
export class LinkLostError extends Error {
  override name = 'LinkLostError';
}
export class LinkTimeoutError extends Error {
  override name = 'LinkTimeoutError';
}

interface Call {
  id: number;
  request: unknown;
  resolve(answer: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

const keyOf = (address: LinkAddress) => `${address.host}:${address.port}/${address.token}`;

class PeerConnection {
  readonly #socket: Socket;
  #ready = false;
  #nextId = 0;
  /** Made before the welcome: not sent yet. */
  readonly #queued = new Map<number, Call>();
  /** Sent, waiting for their answers. */
  readonly #sent = new Map<number, Call>();

  constructor(
    readonly key: string,
    address: LinkAddress,
    private readonly onClose: (peer: PeerConnection, wasReady: boolean) => void,
  ) {
    this.#socket = connect({ host: address.host, port: address.port, noDelay: true });
    const opening = setTimeout(() => this.#socket.destroy(), CONNECT_TIMEOUT_MS);
    opening.unref();
    const reader = new FrameReader((frame) => {
      if (!this.#ready) {
        this.#ready = true;
        clearTimeout(opening);
        for (const call of this.#queued.values()) this.#send(call);
        this.#queued.clear();
        return;
      }
      const { id, answer } = frame as AnswerFrame;
      const call = this.#sent.get(id);
      if (!call) return; // timed out meanwhile
      this.#sent.delete(id);
      clearTimeout(call.timer);
      call.resolve(answer);
    });
    this.#socket.on('connect', () => writeFrame(this.#socket, { token: address.token } satisfies HelloFrame));
    this.#socket.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch {
        this.#socket.destroy();
      }
    });
    this.#socket.on('error', () => undefined); // 'close' follows
    this.#socket.on('close', () => {
      clearTimeout(opening);
      const where = `${address.host}:${address.port}`;
      this.#failAll(this.#queued, new LinkNotDeliveredError(`no link to ${where}`));
      this.#failAll(this.#sent, new LinkLostError(`the link to ${where} closed with the call in flight`));
      this.onClose(this, this.#ready);
    });
  }

  get closed(): boolean {
    return this.#socket.destroyed;
  }

  call(request: unknown, timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = ++this.#nextId;
      const timer = setTimeout(() => {
        this.#queued.delete(id);
        this.#sent.delete(id);
        reject(new LinkTimeoutError(`no answer on the link within ${timeoutMs} ms`));
      }, timeoutMs);
      const call: Call = { id, request, resolve, reject, timer };
      if (this.#ready) this.#send(call);
      else this.#queued.set(id, call);
    });
  }

  close(): void {
    this.#socket.destroy();
  }

  #send(call: Call): void {
    this.#sent.set(call.id, call);
    writeFrame(this.#socket, { id: call.id, request: call.request } satisfies CallFrame);
  }

  #failAll(calls: Map<number, Call>, error: Error): void {
    for (const call of calls.values()) {
      clearTimeout(call.timer);
      call.reject(error);
    }
    calls.clear();
  }
}

export class NodeLinks {
  readonly #peers = new Map<string, PeerConnection>();
  /** Nodes whose link could not be opened, and until when calls to them skip it. */
  readonly #unreachable = new Map<string, number>();
  #closed = false;

  /** Sends `request` to `node`'s link at `address`; resolves with the answer (see the errors above). */
  call(node: string, address: LinkAddress, request: unknown, timeoutMs: number): Promise<unknown> {
    if (this.#closed) return Promise.reject(new LinkNotDeliveredError('the node links are closed'));
    const key = keyOf(address);
    let peer = this.#peers.get(node);
    if (peer && peer.key !== key) {
      // The node restarted (a new port or token): the old connection is of no more use.
      peer.close();
      peer = undefined;
    }
    if (!peer || peer.closed) {
      const until = this.#unreachable.get(node);
      if (until !== undefined && performance.now() < until)
        return Promise.reject(new LinkNotDeliveredError(`node ${node}'s link was unreachable moments ago`));
      peer = new PeerConnection(key, address, (gone, wasReady) => {
        if (this.#peers.get(node) === gone) this.#peers.delete(node);
        if (!wasReady) this.#unreachable.set(node, performance.now() + RETRY_AFTER_MS);
      });
      this.#peers.set(node, peer);
      this.#unreachable.delete(node);
    }
    return peer.call(request, timeoutMs);
  }

  close(): void {
    this.#closed = true;
    for (const peer of this.#peers.values()) peer.close();
    this.#peers.clear();
  }
}
