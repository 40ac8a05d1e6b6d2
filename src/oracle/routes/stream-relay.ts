// Thread: main (front door)
// The main thread's end of a chat stream: waits for the actor's first word (refused -> a JSON answer,
// open -> an SSE stream), then hands each batch of frames (frame-batch.ts) to its sink in one call, acknowledges
// frames while the sink takes them (the actor's backpressure window), asks for heartbeats, and ends every stream
// with closing frames (stream-ending.ts): those the actor's end message carries, or a failure's when its host died.
// The sink (frame-sink.ts: the run log, or a bare socket) encodes them.
import type { StreamChannel } from '../../runtime/stream-channel.js';
import { fromWire } from '../../runtime/wire-errors.js';
import { STREAM_ACK_EVERY, type StreamControl, type StreamMessage } from '../chat/chat-protocol.js';
import { closingFrameAt, type FrameBatch, toBatch } from '../frame-batch.js';
import type { FrameSink } from '../frame-sink.js';
import { HEARTBEAT } from '../sse-frames.js';
import { closingFrames } from '../stream-ending.js';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

export { HEARTBEAT };

export type RelayOutcome =
  /** Refused before it opened (a DomainError or a TransientError); the route answers it (oracle/errors.ts). */
  | { kind: 'refused'; error: Error }
  | { kind: 'streaming'; finished: Promise<void> }
  /** The actor failed before it said anything (its host died): nothing was written. */
  | { kind: 'failed'; error: unknown };

export interface RelayOptions {
  /** Opens the HTTP stream (status 200, SSE_HEADERS): where the frames go. */
  open(): FrameSink;
  /** The actor took the turn out of its mailbox (before its own checks and hooks). */
  started?(): void;
  /** Aborted when the turn must stop because its caller went away (absent: only the actor ends it). */
  signal?: AbortSignal;
  heartbeatMs: number;
  /** Settles when the actor's stream handler returns; a rejection means its host died. */
  done: Promise<void>;
  /**
   * Cluster mode: the actor's node died after the stream opened, and the run goes on without it (kept in the runs
   * stream, taken over by the partition's next owner). True: the stream ends without closing frames, so that its
   * client re-joins the run instead of reading a failure.
   */
  hostLost?: () => boolean;
}

export function relayStream(port: StreamChannel, options: RelayOptions): Promise<RelayOutcome> {
  return new Promise<RelayOutcome>((resolveOutcome) => {
    let writer: FrameSink | undefined;
    /** The number the next frame gets (the actor's sequence, continued by a failure's closing frames). */
    let next = 1;
    let settled = false;
    let finished = false;
    let resolveFinished!: () => void;
    const finishedPromise = new Promise<void>((resolve) => (resolveFinished = resolve));
    let written = 0;
    let acked = 0;
    let blocked = false;
    let heartbeat: NodeJS.Timeout | undefined;

    const control = (message: StreamControl) => {
      if (!finished) port.postMessage(message);
    };
    const cancel = () => control({ type: 'cancel' });
    const ack = () => {
      if (written > acked) control({ type: 'ack', frames: (acked = written) });
    };
    const outcome = (value: RelayOutcome) => {
      if (settled) return;
      settled = true;
      resolveOutcome(value);
    };
    const taken = (ok: boolean) => {
      if (!ok && !blocked && writer) {
        blocked = true;
        writer.onDrain(() => {
          blocked = false;
          ack();
        });
      }
    };
    const write = (batch: FrameBatch) => {
      if (writer && !writer.closed) taken(writer.frames(batch));
      next = batch.first + batch.events.length;
    };
    /** Ends the stream: the closing frames each in a write of its own, `done` last (none: cut, the client re-joins). */
    const finish = (closing?: FrameBatch) => {
      if (finished) return;
      finished = true;
      if (writer && !writer.closed) {
        for (let i = 0; closing && i < closing.events.length; i++) write(closingFrameAt(closing, i));
        writer.end(closing?.status);
      }
      clearInterval(heartbeat);
      options.signal?.removeEventListener('abort', cancel);
      port.close();
      resolveFinished();
    };

    options.signal?.addEventListener('abort', cancel, { once: true });
    port.on('message', (message: StreamMessage) => {
      switch (message.type) {
        case 'refused':
          outcome({ kind: 'refused', error: fromWire(message.error) });
          return finish();
        case 'started':
          return options.started?.();
        case 'open':
          writer = options.open();
          writer.onClose(cancel);
          heartbeat = setInterval(
            () => !blocked && writer && !writer.closed && taken(writer.heartbeat()),
            options.heartbeatMs,
          );
          heartbeat.unref();
          return outcome({ kind: 'streaming', finished: finishedPromise });
        case 'frames':
          write(message.batch);
          written += message.batch.events.length;
          if (!blocked && written - acked >= STREAM_ACK_EVERY) ack();
          return;
        case 'end':
          return finish(message.closing);
      }
    });
    options.done.catch((error: unknown) => {
      if (!settled) outcome({ kind: 'failed', error });
      if (writer !== undefined && options.hostLost?.() === true) return finish();
      finish(
        toBatch(next, closingFrames({ type: 'failed', failure: { code: 'host_unavailable', message: String(error) } })),
      );
    });
  });
}
