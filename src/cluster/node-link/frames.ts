// Main thread: the node link's framing. A frame is a 4-byte big-endian length and that many bytes of JSON. Frames
// of one event-loop iteration leave in one socket write (the socket is corked until the loop's check phase).
import type { Socket } from 'node:net';
import { corkUntilCheckPhase } from '../coalesced-writes.js';

/** A bigger frame ends the connection: no peer sends one (an actor message is far smaller), so it is garbage. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export class FrameTooLargeError extends Error {
  constructor(bytes: number) {
    super(`a node-link frame of ${bytes} bytes is over the ${MAX_FRAME_BYTES}-byte limit`);
    this.name = 'FrameTooLargeError';
  }
}

/** Writes `value` as one frame; the socket's own buffer holds it while the kernel's is full. */
export function writeFrame(socket: Socket, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(body.length, 0);
  corkUntilCheckPhase(socket);
  socket.write(head);
  socket.write(body);
}

/** Splits a byte stream into frames: feed it every chunk; it calls `onFrame` for each complete frame, in order. */
export class FrameReader {
  #pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (value: unknown) => void) {}

  /** Throws FrameTooLargeError (the connection should end) or a JSON SyntaxError. */
  push(chunk: Buffer): void {
    let buffer = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    while (buffer.length >= 4) {
      const length = buffer.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) throw new FrameTooLargeError(length);
      if (buffer.length < 4 + length) break;
      const body = buffer.subarray(4, 4 + length);
      buffer = buffer.subarray(4 + length);
      this.onFrame(JSON.parse(body.toString()));
    }
    // Keep a copy of a partial frame only: a subarray would pin the whole chunk it came from.
    this.#pending = buffer.length ? Buffer.from(buffer) : Buffer.alloc(0);
  }
}
