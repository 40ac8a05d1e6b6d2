// The main thread's end of a chat stream: waits for the actor's first word (refused -> a JSON answer,
// open -> an SSE stream), then writes each frame to the socket in one write, acknowledges frames while the
// socket takes them (the actor's backpressure window), writes `: heartbeat` comments, and guarantees that
// `done` is the last frame even when the actor host dies mid-stream.
import type { StreamWriter } from '../../http/types.js';
import { DomainError } from '../../runtime/errors.js';
import type { StreamChannel } from '../../runtime/stream-channel.js';
import { encodeSseFrame } from '../agent/sse-frames.js';
import { STREAM_ACK_EVERY, type StreamControl, type StreamMessage } from './protocol.js';

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

export const HEARTBEAT = ': heartbeat\n\n';
const DONE = encodeSseFrame({ event: 'done', data: {} });

export type RelayOutcome =
  /** Refused before it opened; the route answers it (oracle/errors.ts maps it). */
  | { kind: 'refused'; error: DomainError }
  | { kind: 'streaming'; finished: Promise<void> }
  /** The actor failed before it said anything (its host died): nothing was written. */
  | { kind: 'failed'; error: unknown };

export interface RelayOptions {
  /** Opens the HTTP stream (status 200, SSE_HEADERS). */
  open(): StreamWriter;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  heartbeatMs: number;
  /** Settles when the actor's stream handler returns; a rejection means its host died. */
  done: Promise<void>;
  /** The error frame written when the actor fails mid-stream. */
  failureMessage?: string;
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
    let doneWritten = false;
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
    const finish = (failure?: string) => {
      if (finished) return;
      if (writer && !writer.closed) {
        if (failure !== undefined && !doneWritten) write(encodeSseFrame({ event: 'error', data: { error: failure, timestamp: new Date().toISOString() } }));
        if (!doneWritten) write(DONE);
        writer.end();
      }
      finished = true;
      clearInterval(heartbeat);
      options.signal.removeEventListener('abort', cancel);
      port.close();
      resolveFinished();
    };

    options.signal.addEventListener('abort', cancel, { once: true });
    port.on('message', (message: StreamMessage) => {
      switch (message.type) {
        case 'refused':
          outcome({ kind: 'refused', error: new DomainError(message.code, message.message, message.details) });
          return finish();
        case 'open':
          writer = options.open();
          writer.onClose(() => {
            if (!doneWritten) cancel();
          });
          heartbeat = setInterval(() => !blocked && write(HEARTBEAT), options.heartbeatMs);
          heartbeat.unref();
          return outcome({ kind: 'streaming', finished: finishedPromise });
        case 'frame':
          write(message.text);
          written++;
          if (message.final) doneWritten = true;
          if (!blocked && written - acked >= STREAM_ACK_EVERY) ack();
          return;
        case 'end':
          return finish();
      }
    });
    options.done.catch((error: unknown) => {
      if (!settled) outcome({ kind: 'failed', error });
      finish(options.failureMessage ?? 'The chat service stopped while answering; please send your message again');
    });
  });
}
