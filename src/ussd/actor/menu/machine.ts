// Actor hosts. Runs the menu: one input in, the next session and its screen out. Navigation keys are handled
// here the same way for every state: `*` exits only where the state offers Exit, `00` goes home where offered,
// `0` goes back where offered; anything else is the state's own input (where `*`, `0` or `00` are plain text).
import {
  ENDED_STATE,
  type ConsumedHistory,
  type PendingDraft,
  type UssdContext,
  type UssdDial,
  type UssdSession,
} from '../../session.js';
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

/** A value now or later: the menu's states are mostly synchronous, and only a store read makes a step wait. */
type Maybe<T> = T | Promise<T>;

/**
 * `next(value)`, at once when `value` is not a promise. Instead of async functions: four nested ones per step
 * each cost a promise, a suspended frame and a microtask turn, for states that almost never wait.
 */
function andThen<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** The session and welcome menu of a new dial. `dial.text` (usually '') counts as consumed. */
export function welcome(dial: UssdDial, deps: MenuDeps): Maybe<MenuStep> {
  const now = deps.now();
  const draft: UssdSession = {
    sessionId: dial.sessionId,
    phoneNumber: dial.phoneNumber,
    serviceCode: dial.serviceCode,
    state: 'preMenu',
    context: { sessionId: dial.sessionId, phoneNumber: dial.phoneNumber, message: '', isAuthenticated: false },
    history: rememberHistory(dial.text, deps.pinCipher),
    screen: '',
    createdAt: now,
    updatedAt: now,
    expiresAt: now + deps.sessionTtlSeconds * 1000,
  };
  return andThen(render('preMenu', undefined, draft, deps), (message) => shown(draft, draft.context, 'CON ', message));
}

/** Applies one user input to the session. Never throws for bad input; store faults propagate. */
export function applyInput(session: UssdSession, rawInput: string, deps: MenuDeps): Maybe<MenuStep> {
  return applyInputRemembering(session, rawInput, deps, session.history);
}

/**
 * One gateway request against the session it belongs to (undefined for a new dial): a retry gets the last
 * screen again without applying anything; otherwise the new input is applied and `dial.text` becomes the
 * consumed history.
 * Expiry is the caller's business: pass only a live session.
 */
export function answer(
  existing: UssdSession | undefined,
  dial: UssdDial,
  deps: MenuDeps,
): Maybe<MenuStep & { retry: boolean }> {
  if (!existing) return andThen(welcome(dial, deps), asNewStep);
  const next = newInputAfter(existing.history, dial.text, deps.pinCipher);
  if (next.kind === 'retry') {
    return { session: existing, screen: existing.screen, ended: existing.state === ENDED_STATE, retry: true };
  }
  // The session is built once, with the history it will store (no copy of it to swap the history in).
  return andThen(
    applyInputRemembering(existing, next.input, deps, rememberHistory(dial.text, deps.pinCipher)),
    asNewStep,
  );
}

const asNewStep = (step: MenuStep): MenuStep & { retry: boolean } => ({
  session: step.session,
  screen: step.screen,
  ended: step.ended,
  retry: false,
});

/** applyInput, the next session storing `history` as its consumed history. */
function applyInputRemembering(
  session: UssdSession,
  rawInput: string,
  deps: MenuDeps,
  history: ConsumedHistory,
): Maybe<MenuStep> {
  if (session.state === ENDED_STATE) return { session: { ...session, history }, screen: session.screen, ended: true };
  const input = rawInput.trim();
  const state = STATES[session.state as StateName] as StateDef | undefined;
  let outcome: Maybe<Outcome>;
  if (!state) outcome = { to: 'preMenu' };
  else if (state.auth && !session.context.isAuthenticated) outcome = { to: 'preMenu', notice: TEXT.loginFirst };
  else outcome = navigation(state, input, session) ?? state.handle(input, session, deps);
  return andThen(outcome, (settled) => settle(session, settled, deps, history));
}

function navigation(state: StateDef, input: string, session: UssdSession): Outcome | undefined {
  if (input === '*' && state.exit) return { end: state.exit(session) };
  if (input === '00' && state.home) return { to: 'preMenu' };
  if (input === '0' && state.back) return { to: state.back };
  return undefined;
}

function settle(session: UssdSession, outcome: Outcome, deps: MenuDeps, history: ConsumedHistory): Maybe<MenuStep> {
  const now = deps.now();
  const context = outcome.context ? changed(session.context, outcome.context) : session.context;
  const expiresAt = now + deps.sessionTtlSeconds * 1000;
  if ('end' in outcome)
    return shown(
      nextSession(session, ENDED_STATE, context, undefined, history, now, expiresAt),
      context,
      'END ',
      outcome.end,
    );
  let target = outcome.to;
  let notice = outcome.notice;
  if (STATES[target]?.auth && !context.isAuthenticated) [target, notice] = ['preMenu', TEXT.loginFirst];
  const pending = keep(session.pending, 'pending' in outcome ? outcome.pending : undefined, STATES[target]?.keeps);
  const draft = nextSession(session, target, context, pending, history, now, expiresAt);
  return andThen(render(target, notice, draft, deps), (message) => shown(draft, context, 'CON ', message));
}

/**
 * The session after a step, every field written out (one object of one shape, no spread of the old one); its
 * screen is set by `shown`. `pending` is left out when there is none.
 */
function nextSession(
  session: UssdSession,
  state: string,
  context: UssdContext,
  pending: PendingDraft | undefined,
  history: ConsumedHistory,
  updatedAt: number,
  expiresAt: number,
): UssdSession {
  const { sessionId, phoneNumber, serviceCode, screen, createdAt } = session;
  return pending
    ? { sessionId, phoneNumber, serviceCode, state, context, pending, history, screen, createdAt, updatedAt, expiresAt }
    : { sessionId, phoneNumber, serviceCode, state, context, history, screen, createdAt, updatedAt, expiresAt };
}

/** The step that shows `message` (after `prefix`, `CON ` or `END `): the draft gets its screen and context message. */
function shown(draft: UssdSession, context: UssdContext, prefix: 'CON ' | 'END ', message: string): MenuStep {
  draft.context = { ...context, message };
  draft.screen = prefix + message;
  return { session: draft, screen: draft.screen, ended: prefix === 'END ' };
}

function render(name: StateName, notice: string | undefined, session: UssdSession, deps: MenuDeps): Maybe<string> {
  const state = STATES[name];
  return andThen(state.body(session, deps), (body) =>
    compose(
      notice,
      body,
      state.back ? NAV.back : undefined,
      state.home ? NAV.home : undefined,
      state.exit ? NAV.exit : undefined,
    ),
  );
}

/**
 * The draft with `changes` applied (an undefined field in `changes` removes it), keeping only the fields the
 * state works with (none when it declares none); undefined when nothing is left.
 */
function keep(
  pending: PendingDraft | undefined,
  changes: PendingDraft | undefined,
  fields: readonly (keyof PendingDraft)[] | undefined,
): PendingDraft | undefined {
  if (!fields) return undefined;
  let kept: PendingDraft | undefined;
  for (const field of fields) {
    const value = changes && field in changes ? changes[field] : pending?.[field];
    if (value !== undefined) (kept ??= {})[field] = value;
  }
  return kept;
}

/** `context` with `changes` applied; a field set to undefined in `changes` is removed. */
function changed(context: UssdContext, changes: Partial<UssdContext>): UssdContext {
  const next: Record<string, unknown> = { ...context, ...changes };
  for (const key of Object.keys(changes)) if (next[key] === undefined) delete next[key];
  return next as unknown as UssdContext;
}
