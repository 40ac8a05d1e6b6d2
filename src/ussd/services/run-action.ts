// Thread: actor host
// The action of an `action` state, run by the engine's step: a built-in account action
// (actions.ts), an `http` or `notify` request (webhook/step.ts) or a chain `query` (query/step.ts).
import { isRequestAction, runAction, type ActionResult } from './actions.js';
import type { CompiledState } from './compile.js';
import type { Maybe, Step } from './engine.js';
import { runQuery } from './query/step.js';
import { runRequest } from './webhook/step.js';

export function runStateAction(step: Step, state: CompiledState): Maybe<ActionResult> {
  const action = state.action;
  if (!action) return { outcome: '' };
  if (isRequestAction(action.name)) return runRequest(step, state, action.name, action.request);
  if (action.name === 'query') return runQuery(step, state, action.query);
  return runAction(action.name, { session: step.session, values: step.values, input: step.input }, step.deps);
}
