// Thread: actor host
// AbortSignals that fire when a call's deadline passes, one per slice of time shared by every
// call whose deadline falls in it. An AbortController and its timer per call cost about 3.5 µs on this machine,
// several percent of a host's CPU per USSD step; per 10 ms slice the cost is paid about a hundred times a second
// whatever the load. A signal fires up to one slice after the deadline, which the caller allows for: it waits a
// grace of seconds for the host's own answer (actor-runtime.ts, DEADLINE_GRACE_MS).
import { setMaxListeners } from 'node:events';
import { CallCancelledError } from './errors.js';

export class DeadlineSignals {
  readonly #slices = new Map<number, AbortController>();
  readonly #timers = new Map<number, NodeJS.Timeout>();

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
      const fire = () => {
        this.#slices.delete(slice);
        this.#timers.delete(slice);
        created.abort(new CallCancelledError('its deadline passed'));
      };
      this.#timers.set(slice, setTimeout(fire, Math.max(0, slice * this.sliceMs - Date.now())));
      controller = created;
    }
    return controller.signal;
  }

  /** Stops every timer (the host closed: nothing is waiting any more). */
  clear(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#slices.clear();
  }
}
