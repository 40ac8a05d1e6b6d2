// Thread: main (front door)
// The main thread's end of a chat stream: waits for the actor's first word (refused -> a JSON answer,
// open -> an SSE stream), then hands each batch of frames (frame-batch.ts) to its sink in one call, acknowledges
// frames while the sink takes them (the actor's credit: runtime/sequenced-stream.ts), asks for heartbeats, and ends every stream
// with closing frames (stream-ending.ts): those the actor's end message carries, or a failure's when its host died.
// The sink (frame-sink.ts: the run log, or a bare socket) encodes them.
import { CreditGrant, SequenceIn } from '../../runtime/sequenced-stream.js';
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
    /** The actor's numbers, continued by a failure's closing frames. */
    const ids = new SequenceIn();
    let settled = false;
    let finished = false;
    let resolveFinished!: () => void;
    const finishedPromise = new Promise<void>((resolve) => (resolveFinished = resolve));
    let heartbeat: NodeJS.Timeout | undefined;

    const control = (message: StreamControl) => {
      if (!finished) port.postMessage(message);
    };
    const cancel = () => control({ type: 'cancel' });
    const credit = new CreditGrant(STREAM_ACK_EVERY, (frames) => control({ type: 'ack', frames }));
    const outcome = (value: RelayOutcome) => {
      if (settled) return;
      settled = true;
      resolveOutcome(value);
    };
    /** The sink took `count` frames (or a heartbeat: 0); when it is full, no credit until it drains. */
    const taken = (count: number, ok: boolean) => {
      const blocked = credit.blocked;
      credit.took(count, ok);
      if (!blocked && credit.blocked) writer?.onDrain(() => credit.drained());
    };
    /** Writes a batch in order (`counted`: the actor's, which its credit counts); false on a gap. */
    const write = (batch: FrameBatch, counted: boolean): boolean => {
      const count = batch.events.length;
      const arrival = ids.take(batch.first, count);
      if (arrival.kind === 'gap') return false;
      const ok = arrival.kind !== 'next' || !writer || writer.closed || writer.frames(batch);
      taken(counted ? count : 0, ok);
      return true;
    };
    /** Ends the stream: the closing frames each in a write of its own, `done` last (none: cut, the client re-joins). */
    const finish = (closing?: FrameBatch) => {
      if (finished) return;
      finished = true;
      if (writer && !writer.closed) {
        for (let i = 0; closing && i < closing.events.length; i++) write(closingFrameAt(closing, i), false);
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
            () => !credit.blocked && writer && !writer.closed && taken(0, writer.heartbeat()),
            options.heartbeatMs,
          );
          heartbeat.unref();
          return outcome({ kind: 'streaming', finished: finishedPromise });
        case 'frames':
          // Never on a worker port, which keeps order; were it to happen, the stream fails rather than show a hole.
          if (!write(message.batch, true)) failed('the stream lost frames in transit');
          return;
        case 'end':
          return finish(message.closing);
      }
    });
    /** Ends the stream with a failure's closing frames, numbered on from the actor's. */
    const failed = (message: string) =>
      finish(toBatch(ids.expected, closingFrames({ type: 'failed', failure: { code: 'host_unavailable', message } })));
    options.done.catch((error: unknown) => {
      if (!settled) outcome({ kind: 'failed', error });
      if (writer !== undefined && options.hostLost?.() === true) return finish();
      failed(String(error));
    });
  });
}
