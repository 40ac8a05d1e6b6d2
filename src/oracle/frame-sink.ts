// Thread: main (front door)
// Where the main thread's end of a chat stream writes its frames (routes/stream-relay.ts): numbered batches
// (frame-batch.ts), and the status the stream ended with. The run log (runs/run-log.ts) is one: it keeps the batches
// and encodes each once for its readers; `socketSink` is the bare one, a socket with no run behind it (frames
// without `id:` lines). The SSE text is made here, at the socket, and nowhere before.
import type { StreamWriter } from '../http/types.js';
import { encodeBatch, type FrameBatch } from './frame-batch.js';
import { HEARTBEAT, type EndStatus } from './sse-frames.js';

export interface FrameSink {
  /** The next frames; false when a reader is full (then wait for onDrain). */
  frames(batch: FrameBatch): boolean;
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
    frames: (batch) => writer.write(encodeBatch(batch, 0, false)),
    heartbeat: () => writer.write(HEARTBEAT),
    onDrain: (listener) => writer.onDrain(listener),
    onClose: (listener) => writer.onClose(listener),
    end: () => writer.end(),
    get closed() {
      return writer.closed;
    },
  };
}
