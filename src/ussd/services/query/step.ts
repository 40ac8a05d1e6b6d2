// Thread: actor host
// A `query` state run inside the engine's step: its path filled from the session (path.ts), asked of
// the main thread's gateway in process (src/base/chain-rest.ts) within the step's time left, and the answer's fields
// saved as `http` saves them. The outcome is part of the step the actor commits: a retry replays it, never asks again.
import type { RestAnswer } from '../../../base/chain-rest.js';
import { ussdQueryCalls, ussdQueryDuration } from '../../../metrics/catalogue.js';
import type { ActionResult } from '../actions.js';
import type { CompiledState } from '../compile.js';
import type { Step } from '../engine.js';
import { loadAccount, lookupOf } from '../step-lookup.js';
import { savedFields } from '../webhook/request.js';
import { fillPath, type CompiledQuery } from './path.js';

export type QueryOutcome = 'ok' | 'not_found' | 'unreachable';

/** gRPC status codes by number, in snake case (the metric's reason). */
const CODE_NAMES = [
  'ok',
  'cancelled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
];

export async function runQuery(
  step: Step,
  state: CompiledState,
  query: CompiledQuery | undefined,
): Promise<ActionResult> {
  await loadAccount(step, state);
  const service = step.service.id;
  const done = (outcome: QueryOutcome, reason: string, values?: Record<string, string>): ActionResult => {
    ussdQueryCalls.with(service, outcome, reason).inc();
    return values ? { outcome, values } : { outcome };
  };
  const left = step.deadline - step.deps.now();
  const chain = step.deps.chainRest;
  if (!query || left <= 0) return done('unreachable', 'timeout');
  if (!chain) return done('unreachable', 'no_gateway');
  const started = performance.now();
  let answer: RestAnswer | undefined;
  try {
    answer = await chain(fillPath(query.path, lookupOf(step)), Math.max(1, Math.min(query.timeoutMs, left)));
  } catch {
    // The main thread did not answer in time (its own deadline is the same: this is its backstop).
    answer = undefined;
  }
  ussdQueryDuration.with(service).observe((performance.now() - started) / 1000);
  if (!answer) return done('unreachable', 'timeout');
  const { outcome, reason, json } = classify(answer);
  return done(outcome, reason, outcome === 'ok' ? savedFields(query.save, json) : undefined);
}

/** What the gateway's answer means to a menu: the chain's data, its "no such thing", or no answer to give. */
export function classify(answer: RestAnswer): { outcome: QueryOutcome; reason: string; json?: unknown } {
  if (answer.status === 200) {
    try {
      return { outcome: 'ok', reason: 'ok', json: JSON.parse(answer.body) };
    } catch {
      return { outcome: 'unreachable', reason: 'not_json' };
    }
  }
  if (answer.unrouted) return { outcome: 'not_found', reason: 'no_route' };
  const code = codeIn(answer.body);
  const reason = (code === undefined ? undefined : CODE_NAMES[code]) ?? 'unknown';
  // A chain refuses a malformed address or id as INVALID_ARGUMENT: to a caller that typed it, there is no such thing.
  if (reason === 'not_found' || reason === 'invalid_argument' || answer.status === 404)
    return { outcome: 'not_found', reason: reason === 'unknown' ? 'not_found' : reason };
  return { outcome: 'unreachable', reason };
}

/** The gRPC code of a Cosmos REST error body (`{ "code": 5, "message": ... }`). */
function codeIn(body: string): number | undefined {
  try {
    const code = (JSON.parse(body) as { code?: unknown } | null)?.code;
    return typeof code === 'number' && Number.isInteger(code) ? code : undefined;
  } catch {
    return undefined;
  }
}
