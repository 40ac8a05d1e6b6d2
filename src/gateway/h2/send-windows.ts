// Thread: main (the gateway's HTTP/2 client)
// Our sending side of flow control on one connection (RFC 9113 §6.9):
// the connection's send window, each stream's, and the streams whose message waits for a WINDOW_UPDATE.
import type { FrameWriter } from './frame-writer.js';
import { ConnectionError, DEFAULT_MAX_FRAME_SIZE, ErrorCode, MAX_WINDOW, Setting, dataFrame } from './frames.js';
import type { UnaryCall } from './unary-call.js';

export class SendWindows {
  /** The node's SETTINGS_INITIAL_WINDOW_SIZE: where a new stream's send window starts. */
  initialStreamWindow = 65_535;
  /** The node's SETTINGS_MAX_FRAME_SIZE. */
  maxFrame = DEFAULT_MAX_FRAME_SIZE;
  #connection = 65_535;
  /** Streams with message bytes held back by flow control. */
  readonly #blocked = new Set<UnaryCall>();
  readonly #writer: FrameWriter;

  constructor(writer: FrameWriter) {
    this.#writer = writer;
  }

  /** True (and the windows charged) when a request of `size` bytes fits in one frame: the usual case. */
  takeWhole(call: UnaryCall, size: number): boolean {
    if (size > Math.min(call.sendWindow, this.#connection, this.maxFrame)) return false;
    call.sendWindow -= size;
    this.#connection -= size;
    return true;
  }

  /** Sends as much of the message as the windows allow; the rest waits for WINDOW_UPDATE. */
  sendBody(call: UnaryCall): void {
    while (call.body.length > 0) {
      const size = Math.min(call.body.length, call.sendWindow, this.#connection, this.maxFrame);
      if (size <= 0) {
        this.#blocked.add(call);
        return;
      }
      const last = size === call.body.length;
      this.#writer.write(dataFrame(call.id, last ? call.body : call.body.subarray(0, size), last));
      call.sendWindow -= size;
      this.#connection -= size;
      call.body = call.body.subarray(size);
    }
    this.#blocked.delete(call);
  }

  /** The stream ended (or went elsewhere): nothing more of it waits here. */
  forget(call: UnaryCall): void {
    this.#blocked.delete(call);
  }

  clear(): void {
    this.#blocked.clear();
  }

  /**
   * The node's SETTINGS that shape what we send: INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE. Answers its
   * MAX_CONCURRENT_STREAMS, if given. (HEADER_TABLE_SIZE: our encoder never indexes, so any size does.)
   */
  applySettings(settings: [id: number, value: number][], open: Iterable<UnaryCall>): number | undefined {
    let maxConcurrent: number | undefined;
    for (const [id, value] of settings) {
      if (id === Setting.MAX_CONCURRENT_STREAMS) maxConcurrent = value;
      else if (id === Setting.INITIAL_WINDOW_SIZE) this.setInitialStreamWindow(value, open);
      else if (id === Setting.MAX_FRAME_SIZE) this.maxFrame = value;
    }
    return maxConcurrent;
  }

  /** The node's new SETTINGS_INITIAL_WINDOW_SIZE moves every open stream's window by the difference. */
  setInitialStreamWindow(value: number, open: Iterable<UnaryCall>): void {
    const delta = value - this.initialStreamWindow;
    this.initialStreamWindow = value;
    for (const call of open) call.sendWindow += delta;
  }

  /** WINDOW_UPDATE on stream 0; its errors are the connection's. */
  creditConnection(increment: number): void {
    if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
    this.#connection += increment;
    if (this.#connection > MAX_WINDOW)
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window past 2^31-1');
    this.resumeBlocked();
  }

  /** WINDOW_UPDATE on an open stream: undefined, or the code of the stream error to reset it with. */
  creditStream(call: UnaryCall, increment: number): number | undefined {
    if (increment === 0) return ErrorCode.PROTOCOL_ERROR;
    call.sendWindow += increment;
    if (call.sendWindow > MAX_WINDOW) return ErrorCode.FLOW_CONTROL_ERROR;
    if (this.#blocked.has(call)) this.sendBody(call);
    return undefined;
  }

  resumeBlocked(): void {
    for (const call of [...this.#blocked]) {
      if (this.#connection <= 0) return;
      this.sendBody(call);
    }
  }
}
