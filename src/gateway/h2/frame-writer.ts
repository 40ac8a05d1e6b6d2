// Thread: main (the gateway's HTTP/2 client)
// The outgoing side of one connection: the frames of one event-loop
// turn leave in one write, and ACKs the node asks for are bounded while the socket has not drained (a node that
// floods SETTINGS or PINGs without reading the answers is dropped, as nghttp2's max_outbound_ack drops it).
import type { Socket } from 'node:net';
import { ConnectionError, ErrorCode } from './frames.js';

/** ACKs queued while the socket has not drained, past which the node is flooding us (nghttp2's default). */
export const MAX_UNSENT_ACKS = 1000;

export class FrameWriter {
  #out: Buffer[] = [];
  #flushQueued = false;
  #unsentAcks = 0;
  /** Nothing more is written: our side ended, or the connection is gone. */
  #closed = false;
  readonly #flush = () => this.flush();

  constructor(private readonly socket: Socket) {}

  write(frame: Buffer): void {
    if (this.#closed) return;
    this.#out.push(frame);
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      setImmediate(this.#flush);
    }
  }

  /** An ACK the node asked for; throws ENHANCE_YOUR_CALM when the node floods us with them without reading. */
  acknowledge(frame: Buffer): void {
    if (this.#out.length === 0 && this.socket.writableLength === 0) this.#unsentAcks = 0;
    if (++this.#unsentAcks > MAX_UNSENT_ACKS)
      throw new ConnectionError(
        ErrorCode.ENHANCE_YOUR_CALM,
        'flood of SETTINGS or PING frames whose acknowledgements the node does not read',
      );
    this.write(frame);
  }

  flush(): void {
    this.#flushQueued = false;
    const out = this.#out;
    if (out.length === 0 || this.#closed) return;
    this.#out = [];
    this.socket.write(out.length === 1 ? out[0] : Buffer.concat(out));
  }

  /** Flushes what is queued and ends our side; the node closes its side in turn. */
  end(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    this.socket.end();
  }

  /**
   * Drops what is queued and the socket with it; nothing more is written. `lastFrame` (a GOAWAY telling why) is
   * still sent if our side is open, and then the node is given a second to close its side, never waited for.
   */
  abort(lastFrame?: Buffer): void {
    const open = !this.#closed;
    this.#out = [];
    this.#closed = true;
    if (lastFrame && open) {
      const socket = this.socket;
      socket.end(lastFrame);
      setTimeout(() => socket.destroy(), 1000).unref();
    } else {
      this.socket.destroy();
    }
  }
}
