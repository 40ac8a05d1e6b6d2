// Thread: main
// Open loop at a constant arrival rate (as wrk2 and k6's constant-arrival-rate): journey i is due at i / rate
// seconds whatever happened before, and its latency counts from that scheduled time, not from when the timer
// managed to fire or a connection was free. A stalled server therefore shows up in the percentiles (every user
// who arrived during the stall waited) instead of being hidden by a load generator that politely waited too
// (coordinated omission).
import type { Recorder } from './recorder.js';
import { runIteration, type Scenario } from './scenarios/types.js';

/** Journeys in a run of `durationMs` at `rate` per second (the ones due strictly before the end). */
export const totalArrivals = (rate: number, durationMs: number) => Math.ceil((rate * durationMs) / 1000 - 1e-9);

/** Milliseconds after the start at which journey `i` is due. */
export const arrivalTime = (i: number, rate: number) => (i * 1000) / rate;

/** How many journeys are due by `elapsedMs` (journey 0 is due at once). */
export const arrivalsDue = (elapsedMs: number, rate: number, durationMs: number) =>
  Math.min(totalArrivals(rate, durationMs), Math.floor((elapsedMs * rate) / 1000 + 1e-9) + 1);

export interface OpenLoopOptions {
  rate: number;
  durationMs: number;
  /** Journeys in flight beyond this are dropped (counted as errors) instead of piling up without end. */
  maxInFlight: number;
}

export async function runOpenLoop(scenario: Scenario, recorder: Recorder, options: OpenLoopOptions): Promise<void> {
  const { rate, durationMs, maxInFlight } = options;
  const total = totalArrivals(rate, durationMs);
  const running = new Set<Promise<unknown>>();
  const start = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    const pump = () => {
      const due = arrivalsDue(performance.now() - start, rate, durationMs);
      for (; next < due; next++) {
        if (running.size >= maxInFlight) {
          recorder.unanswered('dropped (max in flight)');
          continue;
        }
        const journey = runIteration(scenario, recorder, start + arrivalTime(next, rate)).finally(() =>
          running.delete(journey),
        );
        running.add(journey);
      }
      if (next >= total) return resolve();
      // Timers fire late by a millisecond or more; the latency counts from the schedule anyway.
      setTimeout(pump, Math.max(0, start + arrivalTime(next, rate) - performance.now()));
    };
    pump();
  });
  await Promise.all(running);
}
