// Thread: actor host
// An actor's mailbox: runs tasks one at a time, in arrival order, so an actor's state needs no locks.
// Modelled on piscina's task queue: bounded (a full mailbox refuses at once instead of growing), and a task
// posted with an AbortSignal leaves the queue unrun when the signal fires; a task already running receives
// the signal and checks it before it commits.
import { ActorBusyError, CallCancelledError } from './errors.js';

export type MailboxTask<T> = (signal?: AbortSignal) => Promise<T> | T;

/** A task waiting behind another, with the settlers of the promise its poster holds. */
interface Queued {
  task: MailboxTask<unknown>;
  signal: AbortSignal | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Set while it listens for its signal's abort. */
  onAbort?: () => void;
}

export class Mailbox {
  readonly #queue: Queued[] = [];
  #running = false;
  #drained: (() => void)[] = [];
  /** Runs once the running task settles, however it ends: made once, not per task. */
  readonly #finished = () => {
    this.#running = false;
    this.#next();
  };

  /** `limit`: tasks queued or running at once; one more is refused with ActorBusyError. */
  constructor(readonly limit = Number.POSITIVE_INFINITY) {}

  /** Tasks queued or running. */
  get pending(): number {
    return this.#queue.length + (this.#running ? 1 : 0);
  }

  /**
   * Runs `task` once the tasks before it have settled; resolves or rejects as it does. An idle mailbox (the
   * common case: one message per actor at a time) starts it at once, and the poster gets the task's own promise.
   */
  post<T>(task: MailboxTask<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(cancelledBy(signal));
    if (this.pending >= this.limit)
      return Promise.reject(new ActorBusyError(`Actor mailbox full (${this.limit} messages)`));
    if (!this.#running) return this.#run(task, signal);
    return new Promise<T>((resolve, reject) => {
      const queued: Queued = { task, signal, resolve: resolve as (value: unknown) => void, reject };
      this.#queue.push(queued);
      // Only a task that waits behind another listens for its signal (adding and removing a listener is not free).
      if (signal) {
        queued.onAbort = () => {
          const index = this.#queue.indexOf(queued);
          if (index < 0) return;
          this.#queue.splice(index, 1);
          reject(cancelledBy(signal));
          this.#settleDrain();
        };
        signal.addEventListener('abort', queued.onAbort, { once: true });
      }
    });
  }

  /** Resolves once nothing is queued or running. */
  drained(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  /** Starts `task` now; the mailbox moves on when its promise settles. A synchronous throw is its rejection. */
  #run<T>(task: MailboxTask<T>, signal: AbortSignal | undefined): Promise<T> {
    this.#running = true;
    let result: Promise<T>;
    try {
      result = Promise.resolve(task(signal));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(this.#finished, this.#finished);
    return result;
  }

  #next(): void {
    const queued = this.#queue.shift();
    if (!queued) return this.#settleDrain();
    if (queued.onAbort) queued.signal!.removeEventListener('abort', queued.onAbort);
    this.#run(queued.task, queued.signal).then(queued.resolve, queued.reject);
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
