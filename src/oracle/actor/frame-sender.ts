// Runs on: actor hosts (worker threads) only.
// The actor's end of a stream port: posts SSE frames to the main thread, at most STREAM_WINDOW of them
// unacknowledged. When the socket on the main thread is full, acknowledgements stop and `send` waits, so a
// slow client slows its own generation instead of filling memory. `cancel` (client gone) ends the waiting.
import type { MessagePort } from 'node:worker_threads';
import type { DomainError } from '../../runtime/errors.js';
import { STREAM_WINDOW, type StreamControl, type StreamMessage } from '../chat-protocol.js';
import type { StreamEnding } from '../stream-ending.js';

export class FrameSender {
  #sent = 0;
  #acked = 0;
  #cancelled = false;
  #ended = false;
  #opened = false;
  #wake?: () => void;

  constructor(
    private readonly port: MessagePort,
    onCancel: () => void,
    private readonly window = STREAM_WINDOW,
  ) {
    port.on('message', (control: StreamControl) => {
      if (control.type === 'ack') this.#acked = Math.max(this.#acked, control.frames);
      else if (!this.#cancelled) {
        this.#cancelled = true;
        onCancel();
      }
      this.#wake?.();
    });
  }

  /** The client went away: frames are dropped. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** The turn was refused before the stream opened: the main thread answers it (its face's mapping). */
  refuse(error: DomainError): void {
    this.#post({ type: 'refused', code: error.code, message: error.message, details: error.details });
  }

  /** Whether the HTTP stream was opened (after that, failures are frames). */
  get opened(): boolean {
    return this.#opened;
  }

  open(): void {
    this.#opened = true;
    this.#post({ type: 'open' });
  }

  /** Posts one frame, first waiting while the window is full. */
  async send(text: string): Promise<void> {
    while (!this.#cancelled && this.#sent - this.#acked >= this.window) {
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
    if (this.#cancelled) return;
    this.#post({ type: 'frame', text });
    this.#sent++;
  }

  /** Last message, saying how the stream ended (the relay writes the closing frames); the port closes after it. */
  end(ending?: StreamEnding): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#post({ type: 'end', ending });
    this.port.close();
  }

  #post(message: StreamMessage): void {
    if (!this.#ended || message.type === 'end') this.port.postMessage(message);
  }
}
