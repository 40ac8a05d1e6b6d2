// Thread: main
// A streamed answer (SSE) on either engine: the bounds on a reader that stops reading (bytes unsent since the
// socket last took data, time unable to send) and the close/drain listeners. The engine supplies the socket side.
import { sseStreamsActive } from '../metrics/catalogue.js';
import type { Logger } from '../base/log.js';
import type { StreamLimits } from './front-door.js';
import type { StreamWriter } from './types.js';
import { type Context, type Span, tracing } from '../telemetry/index.js';

const sseStreams = sseStreamsActive.with();

/** What an engine does for a stream. */
export interface StreamSocket {
  /** Writes a chunk; false when the socket did not take all of it (the rest is buffered). */
  write(chunk: string): boolean;
  /** Calls `listener` each time the socket has taken everything buffered. */
  onWritable(listener: () => void): void;
  end(): void;
  /** Closes the connection now; the engine then reports the client gone (which calls the stream's close). */
  destroy(): void;
}

export interface OpenedStream {
  writer: StreamWriter;
  /** The engine's signal that the connection closed (the client left, or destroy). */
  closed(): void;
}

export function openStreamWriter(
  socket: StreamSocket,
  limits: StreamLimits,
  log: Logger,
  requestId: string,
  finish: () => void,
  alreadyClosed: boolean,
  trace: Context | undefined,
  contentType: string | undefined,
): OpenedStream {
  const drainListeners: (() => void)[] = [];
  const closeListeners: (() => void)[] = [];
  const { maxBufferBytes, stallTimeoutMs } = limits;
  let closed = alreadyClosed;
  // Bytes written since the socket stopped taking data, and the timer that gives up on a reader that never reads.
  let backlog = 0;
  let stall: NodeJS.Timeout | undefined;
  if (!closed) sseStreams.inc();
  // Tracing on, inside the request's trace: the stream's life (frames, bytes, how it ended) as a span of its own.
  const span: Span | undefined =
    trace && tracing && !closed ? tracing.start('sse.stream', 'internal', {}, trace) : undefined;
  // An SSE chunk may hold several frames (a batch of events, a re-join's backlog): each ends with a blank line.
  // Any other streamed answer (a JSON list written as it is read) counts its writes.
  const framesIn = contentType?.startsWith('text/event-stream') ? sseFrames : () => 1;
  let frames = 0;
  let bytes = 0;
  let ending = 'client_gone';
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(stall);
    sseStreams.dec();
    if (span) {
      span.setAttributes({ 'sse.frames': frames, 'sse.bytes': bytes, 'sse.ended': ending });
      span.end();
    }
    finish();
    for (const listener of closeListeners.splice(0)) listener();
  };
  const abandon = (reason: string) => {
    if (closed) return;
    ending = 'reader_stalled';
    log.warn({ reqId: requestId, reason, backlogBytes: backlog }, 'stream closed: its reader stopped reading');
    socket.destroy();
  };
  socket.onWritable(() => {
    backlog = 0;
    clearTimeout(stall);
    stall = undefined;
    for (const listener of drainListeners.splice(0)) listener();
  });
  const writer: StreamWriter = {
    get closed() {
      return closed;
    },
    write(chunk) {
      if (closed) return false;
      if (span) {
        frames += framesIn(chunk);
        bytes += Buffer.byteLength(chunk);
      }
      const ok = socket.write(chunk);
      if (ok && !stall) return true;
      backlog += Buffer.byteLength(chunk);
      stall ??= setTimeout(() => abandon(`nothing sent for ${stallTimeoutMs / 1000} s`), stallTimeoutMs);
      if (backlog > maxBufferBytes) abandon(`over ${maxBufferBytes} bytes unsent`);
      return false;
    },
    onDrain(listener) {
      drainListeners.push(listener);
    },
    onClose(listener) {
      if (closed) listener();
      else closeListeners.push(listener);
    },
    end() {
      if (closed) return;
      ending = 'server_end';
      socket.end();
      close();
    },
  };
  return { writer, closed: close };
}

/** The SSE frames `chunk` holds: each (an event, or a comment such as a heartbeat) ends with a blank line. */
export function sseFrames(chunk: string): number {
  let count = 0;
  for (let at = chunk.indexOf('\n\n'); at >= 0; at = chunk.indexOf('\n\n', at + 2)) count++;
  return count;
}
