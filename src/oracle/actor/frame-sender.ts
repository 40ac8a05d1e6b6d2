// Thread: actor host
// The actor's end of a stream port: posts SSE frames to the main thread as batches (frame-batch.ts), numbered from 1
// (a recovered run: on from its writer's), at most STREAM_WINDOW of them unacknowledged. Frames travel in batches (a thread hop
// and an acknowledgement per frame were a fifth of the actor thread's CPU in a turn): those sent within one 0 ms
// timer (about a millisecond, several event-loop turns, as a provider's deltas arrive one per turn) go as one
// message, flushed by that timer, when the window is full, and before the end. The end message carries the closing
// frames and the status they say (stream-ending.ts). When the socket on the main thread is full, acknowledgements
// stop and `send` waits, so a slow client slows its own generation instead of filling memory. `cancel` (client
// gone) ends the waiting. In cluster mode every frame also goes to the run's writer (runs/kept-runs.ts), the run
// as any node re-joins it: there a `cancel` only detaches the port (its caller's node is gone) and the turn goes
// on; a recovered turn has no port at all. There a batch reaches the port only once the runs stream stored it (and
// the end only after the closing frames): a client never holds a frame the stream lacks, so the numbers a takeover
// continues from are never ones a client already has for other frames.
import type { MessagePort } from 'node:worker_threads';
import type { DomainError, TransientError } from '../../runtime/errors.js';
import { Credit, SequenceOut } from '../../runtime/sequenced-stream.js';
import { toWire } from '../../runtime/wire-errors.js';
import { STREAM_WINDOW, type StreamControl, type StreamMessage } from '../chat/chat-protocol.js';
import { type FrameBatch, toBatch } from '../frame-batch.js';
import type { SseFrame } from '../sse-frames.js';
import { closingFrames, type StreamEnding } from '../stream-ending.js';
import type { RunFrameWriter } from '../runs/kept-runs.js';

export class FrameSender {
  /** The port's window (runtime/sequenced-stream.ts): released when nothing reads the port any more. */
  readonly #credit: Credit;
  /** The frames' numbers. */
  readonly #ids: SequenceOut;
  #cancelled = false;
  /** The port's reader is gone but the run goes on (cluster mode): frames go to the run's writer only. */
  #detached = false;
  #ended = false;
  #opened = false;
  /** Frames sent but not posted yet. */
  #pending: SseFrame[] = [];

  constructor(
    private readonly port: MessagePort | undefined,
    onCancel: () => void,
    window = STREAM_WINDOW,
    /** Cluster mode: where the run's frames are kept for re-joins through any node. */
    readonly run?: RunFrameWriter,
  ) {
    this.#credit = new Credit(window);
    this.#ids = new SequenceOut(run?.nextId ?? 1);
    this.#detached = port === undefined;
    if (this.#detached) this.#credit.release();
    port?.on('message', (control: StreamControl) => {
      if (control.type === 'ack') return this.#credit.granted(control.frames);
      if (run) this.#detached = true;
      else if (!this.#cancelled) {
        this.#cancelled = true;
        onCancel();
      }
      this.#credit.release();
    });
  }

  /** The client went away: frames are dropped. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** The turn was refused before the stream opened: the main thread answers it (its face's mapping). */
  refuse(error: DomainError | TransientError): void {
    this.#post({ type: 'refused', error: toWire(error) });
  }

  /** Whether the HTTP stream was opened (after that, failures are frames). */
  get opened(): boolean {
    return this.#opened;
  }

  /** The turn left the mailbox: its run is no longer `queued`. */
  started(): void {
    this.#post({ type: 'started' });
  }

  open(): void {
    this.#opened = true;
    this.run?.open();
    this.#post({ type: 'open' });
  }

  /**
   * Queues one frame for this turn's message, first waiting while the window is full; a promise only then (most
   * frames are queued at once: no promise per delta).
   */
  send(frame: SseFrame): Promise<void> | undefined {
    if (this.#credit.full) return this.#sendWhenRoom(frame);
    this.#queue(frame);
  }

  async #sendWhenRoom(frame: SseFrame): Promise<void> {
    while (this.#credit.full) {
      this.#flush();
      await this.#credit.room();
    }
    this.#queue(frame);
  }

  #queue(frame: SseFrame): void {
    if (this.#cancelled) return;
    if (this.#pending.length === 0) setTimeout(this.#flush, 0);
    this.#pending.push(frame);
    this.#credit.sent();
  }

  /** Last message: the closing frames of `ending` and the status they say (an opened stream); the port closes after it. */
  end(ending?: StreamEnding): void {
    if (this.#ended) return;
    this.#flush();
    this.#ended = true;
    let closing: FrameBatch | undefined;
    if (this.#opened) {
      const frames = closingFrames(ending);
      closing = toBatch(this.#ids.take(frames.length), frames);
    }
    const finish = () => {
      this.port?.postMessage({ type: 'end', ending, closing } satisfies StreamMessage);
      this.port?.close();
    };
    // In cluster mode the client gets the end only once the runs stream stored the closing frames.
    if (closing && this.run) this.run.write(closing, finish);
    else finish();
  }

  #flush = (): void => {
    if (this.#pending.length === 0) return;
    const batch = toBatch(this.#ids.take(this.#pending.length), this.#pending);
    this.#pending = [];
    if (this.run) this.run.write(batch, () => this.#frames(batch));
    else this.#frames(batch);
  };

  #frames(batch: FrameBatch): void {
    if (!this.#cancelled && !this.#detached) this.port?.postMessage({ type: 'frames', batch } satisfies StreamMessage);
  }

  #post(message: StreamMessage): void {
    if (!this.#ended) this.port?.postMessage(message);
  }
}
