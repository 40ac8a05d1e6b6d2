// Thread: main
// The node link's framing. A frame is a 4-byte big-endian length and that many bytes of JSON. Frames
// of one event-loop iteration leave together, in one buffer and one socket write.
import type { Socket } from 'node:net';
import { setImmediate } from 'node:timers';

const EMPTY = Buffer.alloc(0);

/** A bigger frame ends the connection: no peer sends one (an actor message is far smaller), so it is garbage. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export class FrameTooLargeError extends Error {
  constructor(bytes: number) {
    super(`a node-link frame of ${bytes} bytes is over the ${MAX_FRAME_BYTES}-byte limit`);
    this.name = 'FrameTooLargeError';
  }
}

/** Frames queued per socket in this event-loop iteration, as JSON text. */
const queued = new WeakMap<Socket, string[]>();

/**
 * Queues `value` as one frame; the frames of this iteration go out in the check phase as one buffer and one
 * socket write (the socket's own buffer holds them while the kernel's is full).
 */
export function writeFrame(socket: Socket, value: unknown): void {
  let frames = queued.get(socket);
  if (!frames) {
    queued.set(socket, (frames = []));
    setImmediate(() => flushFrames(socket));
  }
  frames.push(JSON.stringify(value));
}

function flushFrames(socket: Socket): void {
  const frames = queued.get(socket) ?? [];
  queued.delete(socket);
  if (socket.destroyed || socket.writableEnded) return;
  const lengths = frames.map((frame) => Buffer.byteLength(frame));
  const out = Buffer.allocUnsafe(lengths.reduce((total, length) => total + 4 + length, 0));
  let at = 0;
  for (const [i, frame] of frames.entries()) {
    out.writeUInt32BE(lengths[i], at);
    out.write(frame, at + 4);
    at += 4 + lengths[i];
  }
  socket.write(out);
}

/** Splits a byte stream into frames: feed it every chunk; it calls `onFrame` for each complete frame, in order. */
export class FrameReader {
  #pending: Buffer = EMPTY;

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
    this.#pending = buffer.length ? Buffer.from(buffer) : EMPTY;
  }
}
