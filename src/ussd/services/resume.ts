// Thread: any (the actor hosts run it)
// Continue after a timeout (docs/ussd-resume.md). A session of a service with `resume` leaves a saved
// point per phone number and service as it goes (the state and the values the user gave); a later dial of the same
// service within `withinSeconds` is offered to continue there (RESUME_STATE), or to start again. The rule of what a
// point holds: it moves only when a step lands on a screen (menu, input, language) that needs no login, shows no
// account field and no value an action gave, while the session is not logged in and holds no PIN; it then holds
// the session's values but PINs and the values actions give (those are results to run again). Otherwise it stays
// where the last such step put it: the PIN prompt itself, or the login screen, before the PIN was typed.
import { RESUME_AT, RESUME_START, RESUME_STATE, type CompiledService, type CompiledState } from './compile.js';
import type { UssdSession } from '../session.js';

/** A saved point: where a session of a service was, for the phone number it is stored under. */
export interface ResumePoint {
  /** The version it was saved on: offered only on the same one. */
  version: string;
  state: string;
  values: Record<string, string>;
  /** The step that saved it (epoch ms); offered until `withinSeconds` after it. */
  savedAt: number;
  /** When it may be removed (savedAt + withinSeconds). */
  expiresAt: number;
}

/** A change a step makes to the saved point of its phone and service: a new point, or none (null: removed). */
export interface ResumeWrite {
  serviceId: string;
  phoneNumber: string;
  point: ResumePoint | null;
}

/**
 * The values of the session offered to continue at `point` (a dial at `start`); undefined when `point` may not be
 * offered: none, from another version, past its time, or at a state that is no longer a resumable screen.
 */
export function offerValues(
  service: CompiledService,
  point: ResumePoint | undefined,
  start: CompiledState,
  now: number,
): Record<string, string> | undefined {
  const resume = service.resume;
  if (!resume || !point || point.version !== service.version || now - point.savedAt >= resume.withinMs) return;
  const state = service.states.get(point.state);
  if (!state || !resume.resumable.has(state)) return;
  return { ...point.values, [RESUME_AT]: state.name, [RESUME_START]: start.name };
}

/**
 * The state a choice on the offer leads to: the saved one, its values kept, or (restart) the dial's start with
 * none. `values` are the step's, changed here.
 */
export function resumeChoice(
  service: CompiledService,
  values: Record<string, string | undefined>,
  choice: 'continue' | 'restart',
): CompiledState {
  const at = values[RESUME_AT];
  const start = values[RESUME_START];
  delete values[RESUME_AT];
  delete values[RESUME_START];
  const saved = choice === 'continue' && at !== undefined ? service.states.get(at) : undefined;
  if (saved) return saved;
  for (const name of Object.keys(values)) delete values[name];
  return (start === undefined ? undefined : service.states.get(start)) ?? service.start;
}

/**
 * What a committed step does to the saved point: saves one (the rule above), removes it (an END, a choice on the
 * offer that leaves nothing to save, a dial that found one it could not offer), or leaves it (undefined).
 * `before`: the session the step applied to (undefined for a dial); `found`: a dial read a point.
 */
export function resumeAfter(
  service: CompiledService,
  before: UssdSession | undefined,
  after: UssdSession,
  ended: boolean,
  found: boolean,
): ResumeWrite | undefined {
  const resume = service.resume;
  if (!resume) return undefined;
  const write = (point: ResumePoint | null): ResumeWrite => ({
    serviceId: service.id,
    phoneNumber: after.phoneNumber,
    point,
  });
  if (ended) return write(null);
  if (after.state === RESUME_STATE) return undefined;
  const chose = before?.state === RESUME_STATE || found;
  const state = service.states.get(after.state);
  const values = after.pending ?? {};
  const names = Object.keys(values);
  const stays =
    !state || !resume.resumable.has(state) || after.context.isAuthenticated || names.some((n) => resume.secrets.has(n));
  if (stays) return chose ? write(null) : undefined;
  const saved: Record<string, string> = {};
  for (const name of names) {
    const value = values[name];
    if (value !== undefined && !resume.forget.has(name) && !name.startsWith('@')) saved[name] = value;
  }
  const atStart = state === service.start || [...service.codes.values()].includes(state);
  if (atStart && Object.keys(saved).length === 0) return before === undefined && !found ? undefined : write(null);
  const savedAt = after.updatedAt;
  return write({
    version: service.version,
    state: state.name,
    values: saved,
    savedAt,
    expiresAt: savedAt + resume.withinMs,
  });
}
