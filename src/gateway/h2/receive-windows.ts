// Thread: main (the gateway's HTTP/2 client)
// Our receiving side of flow control on one connection (RFC 9113 §6.9):
// received bytes are used at once (kept with their call), so each window is credited back once half is used.
import type { FrameWriter } from './frame-writer.js';
import { ConnectionError, ErrorCode, windowUpdateFrame } from './frames.js';
import type { UnaryCall } from './unary-call.js';

/** Our receive windows, announced at once so a 60 KB answer (or many) never waits for a WINDOW_UPDATE. */
export const STREAM_WINDOW = 8 * 1024 * 1024;
export const CONNECTION_WINDOW = 32 * 1024 * 1024;

export class ReceiveWindows {
  #connection = CONNECTION_WINDOW;
  #unacknowledged = 0;
  readonly #writer: FrameWriter;

  constructor(writer: FrameWriter) {
    this.#writer = writer;
  }

  /** DATA of `size` bytes (padding included) on the connection; throws past our window. */
  received(size: number): void {
    this.#connection -= size;
    if (this.#connection < 0)
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA past the connection window');
    this.#unacknowledged += size;
    if (this.#unacknowledged >= CONNECTION_WINDOW / 2) {
      this.#writer.write(windowUpdateFrame(0, this.#unacknowledged));
      this.#connection += this.#unacknowledged;
      this.#unacknowledged = 0;
    }
  }

  /** DATA on an open stream that goes on (not its last frame): credited back at half the stream's window. */
  consumed(call: UnaryCall, size: number): void {
    call.unacknowledged += size;
    if (call.unacknowledged >= STREAM_WINDOW / 2) {
      this.#writer.write(windowUpdateFrame(call.id, call.unacknowledged));
      call.receiveWindow += call.unacknowledged;
      call.unacknowledged = 0;
    }
  }
}
