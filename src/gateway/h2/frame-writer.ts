// Main thread (the gateway's HTTP/2 client). Write coalescing: the frames of one event-loop turn leave in one
// socket write (a call is two frames; a burst of calls is one syscall).
import type { Socket } from 'node:net';

export class FrameWriter {
  #out: Buffer[] = [];
  #flushQueued = false;
  #stopped = false;
  readonly #flush = () => this.flush();

  constructor(private readonly socket: Socket) {}

  write(frame: Buffer): void {
    if (this.#stopped) return;
    this.#out.push(frame);
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      setImmediate(this.#flush);
    }
  }

  /** Writes what is queued now. */
  flush(): void {
    this.#flushQueued = false;
    const out = this.#out;
    if (out.length === 0 || this.#stopped) return;
    this.#out = [];
    this.socket.write(out.length === 1 ? out[0] : Buffer.concat(out));
  }

  /** Nothing more is written (our side ended, or the connection is destroyed); what is queued is dropped. */
  stop(): void {
    this.#stopped = true;
    this.#out = [];
  }
}
