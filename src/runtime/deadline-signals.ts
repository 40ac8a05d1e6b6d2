// Thread: any
// A call's one deadline: an AbortSignal that fires at an absolute time (epoch ms) with a DeadlineExceededError. The
// caller makes it once (a face, when a request arrives) and it travels with the call: ActorRef.send takes it, the
// actor runtime stops waiting when it fires and hands its time to the host (a signal does not cross threads; the
// host makes the same signal from the time, on the same clock), the cluster router sends the time to the owner
// node. Whoever reaches the deadline first aborts with the same reason, and each face maps it once to its answer.
// Signals are shared per slice of time by every call whose deadline falls in it: an AbortController and its timer
// per call cost about 3.5 µs on this machine, several percent of a host's CPU per USSD step; per 10 ms slice the
// cost is paid about a hundred times a second whatever the load. A signal fires up to one slice after its time.
import { setMaxListeners } from 'node:events';
import { DeadlineExceededError } from './errors.js';

export class DeadlineSignals {
  readonly #slices = new Map<number, AbortController>();
  readonly #timers = new Map<number, NodeJS.Timeout>();
  /** Each signal's time (its slice's end): what a signal carries across a thread or to another node. */
  readonly #times = new WeakMap<AbortSignal, number>();

  constructor(private readonly sliceMs = 10) {}

  /** A signal that fires once `deadline` (epoch ms) has passed, at most one slice later. */
  at(deadline: number): AbortSignal {
    const slice = Math.ceil(deadline / this.sliceMs);
    let controller = this.#slices.get(slice);
    if (!controller) {
      const created = new AbortController();
      // Many calls (and what an actor hands it to, such as fetch) listen to one signal: not a leak.
      setMaxListeners(0, created.signal);
      this.#slices.set(slice, created);
      this.#times.set(created.signal, slice * this.sliceMs);
      const fire = () => {
        this.#slices.delete(slice);
        this.#timers.delete(slice);
        created.abort(new DeadlineExceededError());
      };
      // Unref'd: a deadline keeps no thread alive (whoever waits for the call does).
      const timer = setTimeout(fire, Math.max(0, slice * this.sliceMs - Date.now()));
      this.#timers.set(slice, timer.unref());
      controller = created;
    }
    return controller.signal;
  }

  /** The time (epoch ms) a signal of these fires at; undefined for any other signal. */
  timeOf(signal: AbortSignal): number | undefined {
    return this.#times.get(signal);
  }

  /** Stops every timer (nothing is waiting any more). */
  clear(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#slices.clear();
  }
}

/** This thread's deadlines: every caller and host of the thread shares their slices. */
const deadlines = new DeadlineSignals();

/** The deadline at `epochMs`. */
export function deadlineAt(epochMs: number): AbortSignal {
  return deadlines.at(epochMs);
}

/** The deadline `ms` from now. */
export function deadlineIn(ms: number): AbortSignal {
  return deadlines.at(Date.now() + ms);
}

/** A call's deadline as given: a deadline signal, or ms from now (`fallbackMs` when neither). */
export function deadlineOfCall(within: AbortSignal | number | undefined, fallbackMs: number): AbortSignal {
  return within instanceof AbortSignal ? within : deadlineIn(within ?? fallbackMs);
}

/**
 * When `signal` fires (epoch ms): a deadline's time; undefined for a signal that is no deadline (a caller's own
 * AbortController), which fires when its owner says.
 */
export function timeOf(signal: AbortSignal | undefined): number | undefined {
  return signal && deadlines.timeOf(signal);
}

/** The ms left before `signal`'s deadline (0 once it fired; `fallbackMs` for a signal that is no deadline). */
export function timeLeft(signal: AbortSignal, fallbackMs: number): number {
  if (signal.aborted) return 0;
  const at = deadlines.timeOf(signal);
  return at === undefined ? fallbackMs : Math.max(0, at - Date.now());
}

/** `signal`'s reason as the error a call fails with (a DeadlineExceededError for a deadline). */
export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DeadlineExceededError();
}

/**
 * Callbacks waiting on each signal, behind one 'abort' listener of its own: every call of a slice waits on the same
 * signal, and an EventTarget adds a listener object per call and walks them all to remove one.
 */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `onAbort` once `signal` fires; the answered function stops that (O(1), whatever the number waiting). */
function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let callbacks = waiting.get(signal);
  if (!callbacks) {
    const created = new Set<() => void>();
    waiting.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        for (const callback of created) callback();
        created.clear();
      },
      { once: true },
    );
    callbacks = created;
  }
  const added = callbacks;
  added.add(onAbort);
  return () => void added.delete(onAbort);
}

/**
 * `promise`'s outcome, or a rejection with the signal's reason once it fires, whichever comes first. The promise
 * runs on; its late outcome is ignored (handled, so a late rejection is not an unhandled one).
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const stop = whenAborted(signal, () => reject(abortReason(signal)));
    promise.then(
      (value) => (stop(), resolve(value)),
      (error: unknown) => (stop(), reject(error)),
    );
  });
}
