// Thread: any
// The `http` and `notify` actions of a service (docs/ussd-actions.md). Both send the same JSON: the
// service, state, session, phone number, language, the values the state names and an idempotency key made of the
// session id and the step's number. `http` waits for the answer within the step and branches on it; `notify`
// leaves a notification for the outbox, which the step's own commit stores.
import { ussdWebhookCalls, ussdWebhookDuration } from '../../../metrics/catalogue.js';
import type { RequestDefinition } from '../definition.js';
import { MAX_ANSWER_BYTES, postJson, type CallResult } from './client.js';

/** The default time of an `http` call, retries included: well under a gateway's few seconds. */
export const DEFAULT_TIMEOUT_MS = 2_000;
/** Deliveries of a notification before the outbox gives up. */
export const DEFAULT_ATTEMPTS = 8;
/** A saved answer field is cut to this length: it is shown on a screen of under 200 characters. */
const MAX_SAVED_LENGTH = 200;

export interface CompiledRequest {
  url: string;
  values: readonly string[];
  /** Header name, environment variable, prefix. */
  headers: readonly (readonly [string, string, string])[];
  timeoutMs: number;
  /** Value name, answer field path. */
  save: readonly (readonly [string, readonly string[]])[];
  attempts: number;
}

export function compileRequest(definition: RequestDefinition): CompiledRequest {
  return {
    url: definition.url,
    values: definition.values ?? [],
    headers: Object.entries(definition.headers ?? {}).map(([name, { env, prefix }]) => [name, env, prefix ?? '']),
    timeoutMs: definition.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    save: Object.entries(definition.save ?? {}).map(([value, path]) => [value, path.split('.')]),
    attempts: definition.attempts ?? DEFAULT_ATTEMPTS,
  };
}

/** Who is calling: the step the action runs in. */
export interface RequestContext {
  service: string;
  version: string;
  state: string;
  sessionId: string;
  phoneNumber: string;
  language: string;
  /** The step's number in its session (the dial is 1). */
  step: number;
  values: Record<string, string>;
}

/** The key a backend deduplicates by: the same for every attempt at one step of one session. */
export const idempotencyKeyOf = (sessionId: string, step: number) => `${sessionId}:${step}`;

/** The JSON body both actions send. */
export function requestBody(request: CompiledRequest, context: RequestContext): string {
  const values: Record<string, string> = {};
  for (const name of request.values) {
    const value = context.values[name];
    if (value !== undefined) values[name] = value;
  }
  return JSON.stringify({
    service: context.service,
    version: context.version,
    state: context.state,
    sessionId: context.sessionId,
    phoneNumber: context.phoneNumber,
    language: context.language,
    step: context.step,
    idempotencyKey: idempotencyKeyOf(context.sessionId, context.step),
    values,
  });
}

/** The headers from the environment, read at the call (a secret rotated in the environment applies at once). */
export function headersOf(
  headers: CompiledRequest['headers'],
  key: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> | undefined {
  const result: Record<string, string> = { 'idempotency-key': key };
  for (const [name, variable, prefix] of headers) {
    const value = env[variable];
    if (value === undefined || value === '') return undefined;
    result[name] = prefix + value;
  }
  return result;
}

export interface HttpOutcome {
  outcome: 'ok' | 'failed' | 'timeout';
  values?: Record<string, string>;
}

/** Calls the endpoint within `budgetMs` (the step's time left, when less than the request's own timeout). */
export async function runHttp(
  request: CompiledRequest,
  context: RequestContext,
  budgetMs: number,
): Promise<HttpOutcome> {
  const started = performance.now();
  const key = idempotencyKeyOf(context.sessionId, context.step);
  const headers = headersOf(request.headers, key);
  const timeoutMs = Math.max(1, Math.min(request.timeoutMs, budgetMs));
  const result: CallResult | { kind: 'no_secret' } = headers
    ? await postJson({
        url: request.url,
        headers,
        body: requestBody(request, context),
        timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
      })
    : { kind: 'no_secret' };
  ussdWebhookDuration.with(context.service).observe((performance.now() - started) / 1000);
  const outcome = result.kind === 'ok' ? 'ok' : result.kind === 'timeout' ? 'timeout' : 'failed';
  ussdWebhookCalls.with(context.service, outcome, result.kind).inc();
  if (result.kind !== 'ok') return { outcome };
  return { outcome, values: savedFields(request.save, result.json) };
}

/** The answer's fields the request saves: strings, numbers and booleans as text, cut to MAX_SAVED_LENGTH. */
export function savedFields(save: CompiledRequest['save'], json: unknown): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, path] of save) {
    let at: unknown = json;
    for (const part of path)
      at =
        at !== null && typeof at === 'object' && Object.hasOwn(at, part)
          ? (at as Record<string, unknown>)[part]
          : undefined;
    if (typeof at === 'string' || typeof at === 'number' || typeof at === 'boolean')
      values[name] = String(at).slice(0, MAX_SAVED_LENGTH);
  }
  return values;
}
