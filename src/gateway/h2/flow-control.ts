// Main thread (the gateway's HTTP/2 client). Flow control of one connection (RFC 9113 §5.2, §6.9): what the node
// lets us send (its windows per stream and on the connection; a body held back waits for WINDOW_UPDATE), and what
// we let it send (our windows, credited back at half, so an answer never waits for us).
import {
  ConnectionError, DEFAULT_MAX_FRAME_SIZE, dataFrame, ErrorCode, MAX_WINDOW, PREFACE, Setting, settingsFrame, windowUpdateFrame,
} from './frames.js';
import { MAX_HEADER_BLOCK } from './header-blocks.js';
import type { UnaryCall } from './unary-call.js';

/** Our receive windows, announced at once so a 60 KB answer (or many) never waits for a WINDOW_UPDATE. */
export const STREAM_WINDOW = 8 * 1024 * 1024;
export const CONNECTION_WINDOW = 32 * 1024 * 1024;

/** What a connection sends first (allowed with prior knowledge): the client preface, our settings and windows. */
export function clientOpening(): Buffer {
  const settings: [number, number][] = [
    [Setting.ENABLE_PUSH, 0],
    [Setting.INITIAL_WINDOW_SIZE, STREAM_WINDOW],
    [Setting.MAX_HEADER_LIST_SIZE, MAX_HEADER_BLOCK],
  ];
  return Buffer.concat([PREFACE, settingsFrame(settings), windowUpdateFrame(0, CONNECTION_WINDOW - 65_535)]);
}

export class FlowControl {
  /** The node's SETTINGS_INITIAL_WINDOW_SIZE and SETTINGS_MAX_FRAME_SIZE. */
  #peerInitialWindow = 65_535;
  peerMaxFrame = DEFAULT_MAX_FRAME_SIZE;
  /** Our send window on the connection. */
  #sendWindow = 65_535;
  /** Streams with message bytes held back by flow control. */
  readonly #blocked = new Set<UnaryCall>();
  // Our receive window on the connection.
  #receiveWindow = CONNECTION_WINDOW;
  #unacknowledged = 0;

  constructor(private readonly write: (frame: Buffer) => void) {}

  /** A new stream's windows. */
  open(call: UnaryCall): void {
    call.sendWindow = this.#peerInitialWindow;
    call.receiveWindow = STREAM_WINDOW;
  }

  /** Whether `size` bytes fit in one frame within both send windows; if so, they are counted as sent. */
  takeWhole(call: UnaryCall, size: number): boolean {
    if (size > Math.min(call.sendWindow, this.#sendWindow, this.peerMaxFrame)) return false;
    call.sendWindow -= size;
    this.#sendWindow -= size;
    return true;
  }

  /** Sends as much of the call's body as the windows allow; the rest waits for WINDOW_UPDATE. */
  sendBody(call: UnaryCall): void {
    while (call.body.length > 0) {
      const size = Math.min(call.body.length, call.sendWindow, this.#sendWindow, this.peerMaxFrame);
      if (size <= 0) {
        this.#blocked.add(call);
        return;
      }
      const last = size === call.body.length;
      this.write(dataFrame(call.id, last ? call.body : call.body.subarray(0, size), last));
      call.sendWindow -= size;
      this.#sendWindow -= size;
      call.body = call.body.subarray(size);
    }
    this.#blocked.delete(call);
  }

  /** Held-back bodies go on while the connection window has room. */
  resume(): void {
    for (const call of [...this.#blocked]) {
      if (this.#sendWindow <= 0) return;
      this.sendBody(call);
    }
  }

  /** The node's SETTINGS_INITIAL_WINDOW_SIZE changed: every open stream's window moves by the difference. */
  setInitialWindow(value: number, open: Iterable<UnaryCall>): void {
    const delta = value - this.#peerInitialWindow;
    this.#peerInitialWindow = value;
    for (const call of open) call.sendWindow += delta;
  }

  /** WINDOW_UPDATE on the connection. */
  connectionIncrement(increment: number): void {
    if (increment === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0');
    this.#sendWindow += increment;
    if (this.#sendWindow > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window past 2^31-1');
    this.resume();
  }

  /** WINDOW_UPDATE on a stream: the code to reset it with when the update is wrong, else undefined. */
  streamIncrement(call: UnaryCall, increment: number): number | undefined {
    if (increment === 0) return ErrorCode.PROTOCOL_ERROR;
    call.sendWindow += increment;
    if (call.sendWindow > MAX_WINDOW) return ErrorCode.FLOW_CONTROL_ERROR;
    if (this.#blocked.has(call)) this.sendBody(call);
    return undefined;
  }

  /**
   * A DATA frame's bytes (padding included) against our connection window, counted even for a stream forgotten
   * here; used at once (kept with their call), so the window is credited back at half.
   */
  received(size: number): void {
    this.#receiveWindow -= size;
    if (this.#receiveWindow < 0) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA past the connection window');
    this.#unacknowledged += size;
    if (this.#unacknowledged >= CONNECTION_WINDOW / 2) {
      this.write(windowUpdateFrame(0, this.#unacknowledged));
      this.#receiveWindow += this.#unacknowledged;
      this.#unacknowledged = 0;
    }
  }

  /** The same bytes against the stream's window: false when the node overran it. */
  receivedOnStream(call: UnaryCall, size: number): boolean {
    call.receiveWindow -= size;
    return call.receiveWindow >= 0;
  }

  /** The stream goes on after taking `size` bytes: its window is credited back at half. */
  creditStream(call: UnaryCall, size: number): void {
    call.unacknowledged += size;
    if (call.unacknowledged >= STREAM_WINDOW / 2) {
      this.write(windowUpdateFrame(call.id, call.unacknowledged));
      call.receiveWindow += call.unacknowledged;
      call.unacknowledged = 0;
    }
  }

  /** The stream ended: nothing of it waits any more. */
  forget(call: UnaryCall): void {
    this.#blocked.delete(call);
  }

  clear(): void {
    this.#blocked.clear();
  }
}
