// Thread: actor host
// The time a step's `http` and `query` calls get, from the call's one deadline (runtime/deadline-signals.ts): half of
// what is left of it when the step starts, so a slow endpoint still ends in the service's own screen, committed,
// before the deadline answers the contract's unavailable text.
import { timeOf } from '../../runtime/deadline-signals.js';

/** A call without a deadline (a test's direct call): its step's calls get this long. */
const WITHOUT_DEADLINE_MS = 5_000;
/** However little is left, a call gets this much (it ends in the service's `timeout` branch otherwise at once). */
const MIN_CALLS_MS = 50;

/** When a step that starts `now` under `cancelled` (the call's deadline signal) must be done with its calls. */
export function callsDeadline(cancelled: AbortSignal | undefined, now: number): number {
  const at = timeOf(cancelled);
  return now + (at === undefined ? WITHOUT_DEADLINE_MS : Math.max(MIN_CALLS_MS, Math.floor((at - now) / 2)));
}

/** What one step adds to its host's deps (engine.ts, EngineDeps). */
interface StepCall {
  callsDeadline?: number;
  beforeCall?: () => Promise<void>;
}

/**
 * `deps` for one step: the host's deps as its prototype, and the step's own `callsDeadline` and `beforeCall`. Not a
 * copy: spreading the host's dozen deps cost about 1 µs of the host's CPU per copy, twice a step (issue 43), where
 * this is one small object of the same shape every step. Read its deps by name, never by spreading it (a spread
 * drops what the prototype holds).
 */
export function stepDeps<D extends StepCall>(deps: D, calls: number, beforeCall: (() => Promise<void>) | undefined): D {
  const step = Object.create(deps) as D;
  step.callsDeadline = calls;
  step.beforeCall = beforeCall;
  return step;
}
