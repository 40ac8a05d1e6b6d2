// An actor's mailbox: runs tasks one at a time, in arrival order, so an actor's state needs no locks.
// Modelled on piscina's task queue: bounded (a full mailbox refuses at once instead of growing), and a task
// posted with an AbortSignal leaves the queue unrun when the signal fires; a task already running receives
// the signal and checks it before it commits.
import { ActorBusyError, CallCancelledError } from './errors.js';

export type MailboxTask<T> = (signal?: AbortSignal) => Promise<T> | T;

interface Entry {
  start(): Promise<unknown>;
}

export class Mailbox {
  readonly #queue: Entry[] = [];
  #running = false;
  #drained: (() => void)[] = [];

  /** `limit`: tasks queued or running at once; one more is refused with ActorBusyError. */
  constructor(readonly limit = Number.POSITIVE_INFINITY) {}

  /** Tasks queued or running. */
  get pending(): number {
    return this.#queue.length + (this.#running ? 1 : 0);
  }

  post<T>(task: MailboxTask<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(cancelledBy(signal));
    if (this.pending >= this.limit) return Promise.reject(new ActorBusyError(`Actor mailbox full (${this.limit} messages)`));
    return new Promise<T>((resolve, reject) => {
      let listening = false;
      const onAbort = () => {
        const index = this.#queue.indexOf(entry);
        if (index < 0) return;
        this.#queue.splice(index, 1);
        reject(cancelledBy(signal!));
        this.#settleDrain();
      };
      const entry: Entry = {
        start: () => {
          if (listening) signal!.removeEventListener('abort', onAbort);
          const result = Promise.resolve().then(() => task(signal));
          result.then(resolve, reject);
          return result.catch(() => undefined);
        },
      };
      this.#queue.push(entry);
      this.#next();
      // Only a task that waits behind another listens for its signal (adding and removing a listener is not free).
      if (signal && this.#queue.at(-1) === entry) {
        listening = true;
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }

  /** Resolves once nothing is queued or running. */
  drained(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  #next(): void {
    if (this.#running) return;
    const entry = this.#queue.shift();
    if (!entry) return this.#settleDrain();
    this.#running = true;
    void entry.start().then(() => {
      this.#running = false;
      this.#next();
    });
  }

  #settleDrain(): void {
    if (this.pending > 0) return;
    const waiting = this.#drained;
    this.#drained = [];
    for (const resolve of waiting) resolve();
  }
}

function cancelledBy(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new CallCancelledError();
}
