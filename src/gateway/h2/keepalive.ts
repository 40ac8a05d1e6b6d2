// Thread: main (the gateway's HTTP/2 client)
// Keepalive PINGs of one connection: one every `intervalMs`, and one
// unanswered for `min(intervalMs, 20 s)` (grpc-go's and grpc-js's keepalive timeout) ends the connection.
import type { FrameWriter } from './frame-writer.js';
import { pingFrame } from './frames.js';

const KEEPALIVE_TIMEOUT_MS = 20_000;

export class Keepalive {
  readonly #interval: NodeJS.Timeout;
  /** Set while a PING waits for its ACK. */
  #timeout?: NodeJS.Timeout;

  constructor(intervalMs: number, writer: FrameWriter, unanswered: () => void) {
    const timeoutMs = Math.min(intervalMs, KEEPALIVE_TIMEOUT_MS);
    this.#interval = setInterval(() => {
      if (this.#timeout) return;
      writer.write(pingFrame(Buffer.alloc(8), false));
      this.#timeout = setTimeout(unanswered, timeoutMs).unref();
    }, intervalMs).unref();
  }

  acknowledged(): void {
    clearTimeout(this.#timeout);
    this.#timeout = undefined;
  }

  stop(): void {
    clearInterval(this.#interval);
    clearTimeout(this.#timeout);
  }
}
