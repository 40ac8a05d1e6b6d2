// Thread: main
// What a scenario is: one user's journey (`iterate`), started by the open-loop scheduler at its scheduled time
// or back to back by the closed loop; plain request scenarios also give autocannon their request sequence.
import type autocannon from 'autocannon';
import type { HttpClient } from '../http.js';
import type { LoadOptions } from '../options.js';
import type { Recorder } from '../recorder.js';

export const SCENARIOS = ['ussd', 'chat', 'ws', 'gateway'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface ScenarioContext {
  readonly options: LoadOptions;
  readonly client: HttpClient;
  /** The recorder of the step being run (capacity search swaps it between steps). */
  recorder(): Recorder;
}

export interface Scenario {
  readonly name: string;
  /**
   * One user's journey. Its first request's latency counts from `scheduledAt` (a performance.now() time), so a
   * user kept waiting by a stalled server shows up; later requests count from when the user sends them.
   * Rejects when the journey failed (its requests are already counted).
   */
  iterate(scheduledAt: number): Promise<void>;
  /** For the closed loop: the request sequence of one autocannon connection, when the scenario is plain HTTP. */
  autocannonRequests?(): autocannon.Request[] | undefined;
}

/** Runs one journey, counting it under the scenario's name; never rejects: resolves whether it succeeded. */
export async function runIteration(scenario: Scenario, recorder: Recorder, scheduledAt: number): Promise<boolean> {
  try {
    await scenario.iterate(scheduledAt);
    recorder.count(`${scenario.name} journeys ok`);
    return true;
  } catch {
    recorder.count(`${scenario.name} journeys failed`);
    return false;
  }
}
