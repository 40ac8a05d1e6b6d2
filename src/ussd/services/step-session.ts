// Thread: actor host
// The session record a step leaves (engine.ts): every field written out in one shape, the values the next state
// keeps, its screen and context message.
import type { ConsumedHistory, PendingDraft, UssdContext, UssdSession } from '../session.js';
import type { MenuStep, Step } from './engine.js';

/** The values the target state keeps (all when it names none); undefined when nothing is left. */
export function kept(values: Record<string, string>, keep: readonly string[] | undefined): PendingDraft | undefined {
  let result: Record<string, string> | undefined;
  if (!keep) {
    for (const name in values) (result ??= {})[name] = values[name] as string;
    return result as PendingDraft | undefined;
  }
  for (const name of keep) {
    const value = values[name];
    if (value !== undefined) (result ??= {})[name] = value;
  }
  return result as PendingDraft | undefined;
}

/** The session after a step, every field written out (one shape); its screen is set by `shown`. */
export function nextSession(
  step: Step,
  state: string,
  pending: PendingDraft | undefined,
  history: ConsumedHistory,
  page: number,
): UssdSession {
  const { sessionId, phoneNumber, serviceCode, screen, createdAt } = step.session;
  const now = step.deps.now();
  const session: UssdSession = {
    sessionId,
    phoneNumber,
    serviceCode,
    serviceId: step.service.id,
    serviceVersion: step.service.version,
    language: step.service.languages[step.language] ?? '',
    state,
    context: step.context,
    history,
    screen,
    createdAt,
    updatedAt: now,
    expiresAt: now + step.deps.sessionTtlSeconds * 1000,
    step: (step.session.step ?? 0) + 1,
  };
  if (step.outbox) session.outbox = step.outbox;
  if (pending) session.pending = pending;
  if (page > 0) session.page = page;
  return session;
}

/** The step that shows `message` after `prefix`: the session gets its screen and context message. */
export function shown(session: UssdSession, context: UssdContext, prefix: 'CON ' | 'END ', message: string): MenuStep {
  session.context = { ...context, message };
  session.screen = prefix + message;
  return { session, screen: session.screen, ended: prefix === 'END ' };
}

/** `context` with `changes` applied; a field set to undefined in `changes` is removed. */
export function changed(context: UssdContext, changes: Partial<UssdContext>): UssdContext {
  const next: Record<string, unknown> = { ...context, ...changes };
  for (const key of Object.keys(changes)) if (next[key] === undefined) delete next[key];
  return next as unknown as UssdContext;
}
