// Thread: actor host
// An `http` or `notify` state run inside the engine's step. `http` waits for its endpoint within the
// step's time left; `notify` only adds a notification to the step, which the step's commit stores (the outbox
// delivers it after the answer). Either way the outcome is part of the step the actor commits: replayed, never redone.
import type { ActionResult, RequestAction } from '../actions.js';
import type { CompiledState } from '../compile.js';
import type { Step } from '../engine.js';
import { requestBody, runHttp, type CompiledRequest, type RequestContext } from './request.js';

export function runRequest(
  step: Step,
  state: CompiledState,
  action: RequestAction,
  request: CompiledRequest | undefined,
): ActionResult | Promise<ActionResult> {
  if (!request) return { outcome: 'failed' };
  const context: RequestContext = {
    service: step.service.id,
    version: step.service.version,
    state: state.name,
    sessionId: step.session.sessionId,
    phoneNumber: step.session.phoneNumber,
    language: step.service.languages[step.language] ?? '',
    step: (step.session.step ?? 0) + 1,
    values: step.values,
  };
  if (action === 'http') {
    const left = step.deadline - step.deps.now();
    if (left <= 0) return { outcome: 'timeout' };
    return runHttp(request, context, left);
  }
  const outbox = (step.outbox ??= []);
  outbox.push({
    id: `${context.sessionId}:${context.step}:${outbox.length + 1}`,
    service: context.service,
    url: request.url,
    headers: request.headers.map(([name, env, prefix]) => [name, env, prefix]),
    body: requestBody(request, context),
    attempts: request.attempts,
    timeoutMs: request.timeoutMs,
  });
  return { outcome: 'queued' };
}
