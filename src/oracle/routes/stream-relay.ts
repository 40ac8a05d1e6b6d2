// Thread: main (front door)
// The main thread's end of a chat stream: waits for the actor's first word (refused -> a JSON answer,
// open -> an SSE stream), then writes each batch of frames to the socket in one write, acknowledges frames
// while the socket takes them (the actor's backpressure window), writes `: heartbeat` comments, and writes the closing
// frames of every stream (stream-ending.ts): the ending the actor reports, or a failure when its host died.
import type { StreamWriter } from '../../http/types.js';
import type { StreamChannel } from '../../runtime/stream-channel.js';
import { fromWire } from '../../runtime/wire-errors.js';
import { STREAM_ACK_EVERY, type StreamControl, type StreamMessage } from '../chat-protocol.js';
import { closingFrames, type StreamEnding } from '../stream-ending.js';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

export const HEARTBEAT = ': heartbeat\n\n';

export type RelayOutcome =
  /** Refused before it opened (a DomainError or a TransientError); the route answers it (oracle/errors.ts). */
  | { kind: 'refused'; error: Error }
  | { kind: 'streaming'; finished: Promise<void> }
  /** The actor failed before it said anything (its host died): nothing was written. */
  | { kind: 'failed'; error: unknown };

export interface RelayOptions {
  /** Opens the HTTP stream (status 200, SSE_HEADERS). */
  open(): StreamWriter;
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
    let writer: StreamWriter | undefined;
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
    const write = (text: string) => {
      if (!writer || writer.closed) return;
      if (!writer.write(text) && !blocked) {
        blocked = true;
        writer.onDrain(() => {
          blocked = false;
          ack();
        });
      }
    };
    const finish = (ending?: StreamEnding, closing = true) => {
      if (finished) return;
      finished = true;
      if (writer && !writer.closed) {
        if (closing) for (const frame of closingFrames(ending)) write(frame);
        writer.end();
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
          heartbeat = setInterval(() => !blocked && write(HEARTBEAT), options.heartbeatMs);
          heartbeat.unref();
          return outcome({ kind: 'streaming', finished: finishedPromise });
        case 'frames':
          write(message.text);
          written += message.count;
          if (!blocked && written - acked >= STREAM_ACK_EVERY) ack();
          return;
        case 'end':
          return finish(message.ending);
      }
    });
    options.done.catch((error: unknown) => {
      if (!settled) outcome({ kind: 'failed', error });
      const lost = writer !== undefined && options.hostLost?.() === true;
      finish({ type: 'failed', failure: { code: 'host_unavailable', message: String(error) } }, !lost);
    });
  });
}
