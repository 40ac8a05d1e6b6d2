// Actor hosts. Runs the menu: one input in, the next session and its screen out. Navigation keys are handled
// here the same way for every state: `*` exits only where the state offers Exit, `00` goes home where offered,
// `0` goes back where offered; anything else is the state's own input (where `*`, `0` or `00` are plain text).
import { ENDED_STATE, type PendingDraft, type UssdContext, type UssdDial, type UssdSession } from '../../session.js';
import { newInputAfter, rememberHistory } from '../text-history.js';
import { compose, NAV, TEXT } from './screens.js';
import { STATES } from './states.js';
import type { MenuDeps, Outcome, StateDef, StateName } from './types.js';

export interface MenuStep {
  session: UssdSession;
  /** The full answer: `CON ...` or `END ...`. */
  screen: string;
  /** True for an END answer: the session is over and may be deleted. */
  ended: boolean;
}

export { ENDED_STATE };

/** The session and welcome menu of a new dial. `dial.text` (usually '') counts as consumed. */
export async function welcome(dial: UssdDial, deps: MenuDeps): Promise<MenuStep> {
  const now = deps.now();
  const fresh: UssdSession = {
    sessionId: dial.sessionId,
    phoneNumber: dial.phoneNumber,
    serviceCode: dial.serviceCode,
    state: 'preMenu',
    context: { sessionId: dial.sessionId, phoneNumber: dial.phoneNumber, message: '', isAuthenticated: false },
    history: rememberHistory(dial.text, (text) => deps.pinCipher.digest(text)),
    screen: '',
    createdAt: now,
    updatedAt: now,
    expiresAt: now + deps.sessionTtlSeconds * 1000,
  };
  const message = await render('preMenu', undefined, fresh, deps);
  const session = { ...fresh, context: { ...fresh.context, message }, screen: `CON ${message}` };
  return { session, screen: session.screen, ended: false };
}

/** Applies one user input to the session. Never throws for bad input; store faults propagate. */
export async function applyInput(session: UssdSession, rawInput: string, deps: MenuDeps): Promise<MenuStep> {
  if (session.state === ENDED_STATE) return { session, screen: session.screen, ended: true };
  const input = rawInput.trim();
  const state = STATES[session.state as StateName] as StateDef | undefined;
  let outcome: Outcome;
  if (!state) outcome = { to: 'preMenu' };
  else if (state.auth && !session.context.isAuthenticated) outcome = { to: 'preMenu', notice: TEXT.loginFirst };
  else outcome = navigation(state, input, session) ?? (await state.handle(input, session, deps));
  return settle(session, outcome, deps);
}

/**
 * One gateway request against the session it belongs to (undefined for a new dial): a retry gets the last
 * screen again without applying anything; otherwise the new input is applied and `dial.text` becomes the
 * consumed history.
 * Expiry is the caller's business: pass only a live session.
 */
export async function answer(
  existing: UssdSession | undefined,
  dial: UssdDial,
  deps: MenuDeps,
): Promise<MenuStep & { retry: boolean }> {
  if (!existing) return { ...(await welcome(dial, deps)), retry: false };
  const digest = (text: string) => deps.pinCipher.digest(text);
  const next = newInputAfter(existing.history, dial.text, digest);
  if (next.kind === 'retry') {
    return { session: existing, screen: existing.screen, ended: existing.state === ENDED_STATE, retry: true };
  }
  const step = await applyInput(existing, next.input, deps);
  return { ...step, session: { ...step.session, history: rememberHistory(dial.text, digest) }, retry: false };
}

function navigation(state: StateDef, input: string, session: UssdSession): Outcome | undefined {
  if (input === '*' && state.exit) return { end: state.exit(session) };
  if (input === '00' && state.home) return { to: 'preMenu' };
  if (input === '0' && state.back) return { to: state.back };
  return undefined;
}

async function settle(session: UssdSession, outcome: Outcome, deps: MenuDeps): Promise<MenuStep> {
  const now = deps.now();
  const context = withoutUndefined({ ...session.context, ...outcome.context }) as UssdContext;
  const timing = { updatedAt: now, expiresAt: now + deps.sessionTtlSeconds * 1000 };
  if ('end' in outcome) {
    const message = outcome.end;
    const { pending: _dropped, ...rest } = session;
    const next = { ...rest, ...timing, state: ENDED_STATE, context: { ...context, message }, screen: `END ${message}` };
    return { session: next, screen: next.screen, ended: true };
  }
  let target = outcome.to;
  let notice = outcome.notice;
  if (STATES[target]?.auth && !context.isAuthenticated) [target, notice] = ['preMenu', TEXT.loginFirst];
  const pending = keep({ ...session.pending, ...('pending' in outcome ? outcome.pending : {}) }, STATES[target]?.keeps);
  const { pending: _old, ...rest } = session;
  const draft = { ...rest, ...timing, state: target, context, ...(pending ? { pending } : {}) };
  const message = await render(target, notice, draft, deps);
  const next: UssdSession = { ...draft, context: { ...context, message }, screen: `CON ${message}` };
  return { session: next, screen: next.screen, ended: false };
}

async function render(name: StateName, notice: string | undefined, session: UssdSession, deps: MenuDeps): Promise<string> {
  const state = STATES[name];
  const body = await state.body(session, deps);
  const nav = [state.back && NAV.back, state.home && NAV.home, state.exit && NAV.exit];
  return compose(notice, body, ...nav.map((line) => line || undefined));
}

/** Keeps the draft fields the state works with (none when it declares none); undefined when nothing is left. */
function keep(pending: PendingDraft, fields: readonly (keyof PendingDraft)[] | undefined): PendingDraft | undefined {
  const kept: PendingDraft = {};
  for (const field of fields ?? []) if (pending[field] !== undefined) kept[field] = pending[field];
  return Object.keys(kept).length > 0 ? kept : undefined;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
