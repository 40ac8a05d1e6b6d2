// Thread: main (front door)
// Where the main thread's end of a chat stream writes its frames (routes/stream-relay.ts): frame objects with the
// sequence number of the first, and the status the stream ended with. The run log (runs/run-log.ts) is one: it keeps
// the frames and encodes them once for its readers; `socketSink` is the bare one, a socket with no run behind it
// (frames without `id:` lines). Encoding to SSE text happens here, at the socket, and nowhere before.
import type { StreamWriter } from '../http/types.js';
import { encodeSseFrames, HEARTBEAT, type EndStatus, type SseFrame } from './sse-frames.js';

export interface FrameSink {
  /** `frames`, numbered from `first`; false when a reader is full (then wait for onDrain). */
  frames(first: number, frames: readonly SseFrame[]): boolean;
  /** A heartbeat comment (not a frame); false when a reader is full. */
  heartbeat(): boolean;
  onDrain(listener: () => void): void;
  onClose(listener: () => void): void;
  /** The last frames were written; `status` is how the stream ended (absent: it was cut without closing frames). */
  end(status?: EndStatus): void;
  readonly closed: boolean;
}

/** A socket as a sink: each call's frames in one write, without `id:` lines. */
export function socketSink(writer: StreamWriter): FrameSink {
  return {
    frames: (_first, frames) => writer.write(encodeSseFrames(frames)),
    heartbeat: () => writer.write(HEARTBEAT),
    onDrain: (listener) => writer.onDrain(listener),
    onClose: (listener) => writer.onClose(listener),
    end: () => writer.end(),
    get closed() {
      return writer.closed;
    },
  };
}
