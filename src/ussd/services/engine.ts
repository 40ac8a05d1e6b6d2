// Thread: actor host
// Runs a compiled service, one gateway input at a time: the next session record and its screen. The
// session is pinned to the service version it started on (serviceId, serviceVersion) and carries its language,
// page and values (the `pending` draft), all in the record the actor commits before answering. Navigation is the
// same for every state: More and Back move between pages, Exit only where offered, Home and Back where offered;
// anything else is the state's own input (where those keys are plain text).
import {
  ENDED_STATE,
  type OutboxNotification,
  type ConsumedHistory,
  type LatestInput,
  type UssdContext,
  type UssdDial,
  type UssdSession,
} from '../session.js';
import { extendHistory, latestInput, newInputAfter, rememberHistory } from '../actor/text-history.js';
import type { RestQuery } from '../../base/chain-rest.js';
import type { ActionDeps } from './actions.js';
import type { ServiceCatalog } from './catalog.js';
import { andThen, type Maybe } from './maybe.js';
import { RESUME_STATE, type CompiledBranch, type CompiledService, type CompiledState } from './compile.js';
import { offerValues, resumeChoice } from './resume.js';
import type { ResumePoints } from './resume-points.js';
import { holds, pagesOf } from './render.js';
import { fill, type Template } from './template.js';
import { loadAccount, lookupOf } from './step-lookup.js';
import { changed, kept, nextSession, shown } from './step-session.js';
import { runStateAction } from './run-action.js';
import { ASK_ANSWER, ASK_TURN, answerText, type AskedTurn } from './ask.js';
import { askMove, takeKept } from './ask-step.js';

export interface EngineDeps extends ActionDeps {
  /** Inactivity after which the session expires (USSD_SESSION_TTL_SECONDS). */
  sessionTtlSeconds: number;
  /** The services; the built-in one alone when absent. */
  catalog?: ServiceCatalog;
  /** The language a phone chose before in a service, as a language code; none when absent. */
  languageOf?: (serviceId: string, phoneNumber: string) => string | undefined | Promise<string | undefined>;
  /** Remembers a phone's choice of language in a service (durably, before the answer). */
  rememberLanguage?: (serviceId: string, phoneNumber: string, language: string) => void | Promise<void>;
  /** Reads a version this thread does not hold (a session pinned to it, begun elsewhere or before a restart). */
  readVersion?: (key: string) => Promise<CompiledService | undefined>;
  /** The answer to a dial of a code no service claims (USSD_UNKNOWN_CODE_TEXT). */
  unknownCodeScreen?: string;
  /** When this step's `http` and `query` calls must be done by (epoch ms; step-budget.ts): 5 s from its start if unset. */
  callsDeadline?: number;
  /**
   * Awaited before an `http` call (cluster mode, a step run on a held copy): throws when that copy is not the stored
   * session, so a step another node committed is replayed from the store, never called again.
   */
  beforeCall?: () => Promise<void>;
  /** Where phones left services with `resume` (resume.ts); nothing is offered when absent. */
  resumePoints?: Pick<ResumePoints, 'get'>;
  /** The gateway's Cosmos REST paths, answered in process (the `query` action); absent: every query is unreachable. */
  chainRest?: RestQuery;
}

export interface MenuStep {
  session: UssdSession;
  /** The full answer: `CON ...` or `END ...`. */
  screen: string;
  /** True for an END answer: the session is over and may be deleted. */
  ended: boolean;
  /** Why it ended: an END screen of the service, or the user's exit key. */
  endReason?: 'end' | 'exit';
  /** The chat turn this step asked for (an `ask` state): the front door runs it. */
  ask?: AskedTurn;
  /** A dial read a saved point (resume.ts), offered or not. */
  resumeFound?: boolean;
}

/** Where a step leads: a state with a notice above its screen, or the end of the session with its text. */
export interface Move {
  to: CompiledState;
  notice?: Template;
  page?: number;
}

/** One step's work: the values (saved and said), the context, the service, language and input. */
export interface Step {
  service: CompiledService;
  session: UssdSession;
  language: number;
  input: string;
  values: Record<string, string>;
  said: Record<string, string> | undefined;
  context: UssdContext;
  account: Record<string, string> | undefined;
  deps: EngineDeps;
  /** When this step's `http` and `query` calls must be done by (epoch ms). */
  deadline: number;
  /** The notifications this step leaves for the outbox. */
  outbox: OutboxNotification[] | undefined;
  /** The chat turn asked for on an ask state. */
  ask?: AskedTurn;
}

/** Hops through action states in one step before giving up (a definition's loop of actions). */
const MAX_HOPS = 16;

/**
 * The session and first screen of a new dial on `service` at `start` (its code's start state). `dial.text`
 * (usually '') counts as consumed.
 */
export function welcome(
  dial: UssdDial,
  deps: EngineDeps,
  service: CompiledService,
  start: CompiledState,
): Maybe<MenuStep> {
  // A one-language service has nothing to look up.
  const remembered = service.languages.length > 1 ? deps.languageOf?.(service.id, dial.phoneNumber) : undefined;
  const saved = service.resume ? deps.resumePoints?.get(service.id, dial.phoneNumber) : undefined;
  const read = andThen(remembered, (chosen) => andThen(saved, (point) => ({ chosen, point })));
  return andThen(read, ({ chosen, point }) => {
    const now = deps.now();
    const language = languageIndex(service, chosen);
    const context: UssdContext = {
      sessionId: dial.sessionId,
      phoneNumber: dial.phoneNumber,
      message: '',
      isAuthenticated: false,
    };
    const session: UssdSession = {
      sessionId: dial.sessionId,
      phoneNumber: dial.phoneNumber,
      serviceCode: dial.serviceCode,
      serviceId: service.id,
      serviceVersion: service.version,
      language: service.languages[language] ?? '',
      state: start.name,
      context,
      history: rememberHistory(dial.text, deps.pinCipher),
      screen: '',
      createdAt: now,
      updatedAt: now,
      expiresAt: now + deps.sessionTtlSeconds * 1000,
      ...(dial.stepsBefore ? { step: dial.stepsBefore } : {}),
    };
    const offer = offerValues(service, point, start, now);
    const step = stepOf(service, session, '', deps, offer ?? {});
    const to = (offer && service.states.get(RESUME_STATE)) || start;
    const first = settle(step, { to }, session.history);
    return point ? andThen(first, (done) => ({ ...done, resumeFound: true })) : first;
  });
}

/**
 * One gateway request against its live session (undefined for a new dial, which `begin` answers): a retry gets
 * the last screen again without applying anything; otherwise the new input is applied and `dial.text` becomes the
 * consumed history.
 */
export function continueSession(
  existing: UssdSession,
  dial: UssdDial,
  service: CompiledService,
  deps: EngineDeps,
): Maybe<MenuStep & { retry: boolean }> {
  if (dial.latest) return continueFromLatest(existing, dial, dial.latest, service, deps);
  const next = newInputAfter(existing.history, dial.text, deps.pinCipher);
  if (next.kind === 'retry')
    return { session: existing, screen: existing.screen, ended: existing.state === ENDED_STATE, retry: true };
  return andThen(apply(existing, next.input, service, deps, rememberHistory(dial.text, deps.pinCipher)), asNewStep);
}

/** continueSession for an aggregator that sends only the latest input: the session's history grows by it. */
function continueFromLatest(
  existing: UssdSession,
  dial: UssdDial,
  { step }: LatestInput,
  service: CompiledService,
  deps: EngineDeps,
): Maybe<MenuStep & { retry: boolean }> {
  const next = latestInput(existing.history, dial.text, step);
  if (next.kind === 'retry')
    return { session: existing, screen: existing.screen, ended: existing.state === ENDED_STATE, retry: true };
  const history = extendHistory(existing.history, next.input, step, deps.pinCipher);
  return andThen(apply(existing, next.input, service, deps, history), asNewStep);
}

const asNewStep = (step: MenuStep): MenuStep & { retry: boolean } => {
  const next: MenuStep & { retry: boolean } = {
    session: step.session,
    screen: step.screen,
    ended: step.ended,
    retry: false,
  };
  if (step.endReason) next.endReason = step.endReason;
  if (step.ask) next.ask = step.ask;
  return next;
};

/**
 * The step that shows the answer to `turnId` on the session's ask state (ask.ts); undefined when the session no
 * longer waits for that turn. `late`: the phone shows `working`, so the answer waits for the next input.
 */
export function answered(
  session: UssdSession,
  service: CompiledService,
  deps: EngineDeps,
  turnId: string,
  answer: string | null,
  late: boolean,
): Maybe<MenuStep> | undefined {
  const state = service.states.get(session.state);
  if (!state?.ask || session.pending?.[ASK_TURN] !== turnId) return undefined;
  const step = stepOf(service, session, '', deps, { ...session.pending } as Record<string, string>);
  step.values[ASK_ANSWER] =
    answer === null ? fill(state.ask.failed[step.language] ?? '', lookupOf(step)) : answerText(answer);
  if (!late) delete step.values[ASK_TURN];
  return settle(step, { to: state, page: 0 }, session.history);
}

/** Applies one input to the session, which then stores `history`. Never throws for bad input. */
export function apply(
  session: UssdSession,
  rawInput: string,
  service: CompiledService,
  deps: EngineDeps,
  history: ConsumedHistory,
): Maybe<MenuStep> {
  if (session.state === ENDED_STATE) return { session: { ...session, history }, screen: session.screen, ended: true };
  const input = rawInput.trim();
  const step = stepOf(
    service,
    session,
    input,
    deps,
    session.pending ? ({ ...session.pending } as Record<string, string>) : {},
  );
  const state = service.states.get(session.state);
  if (!state || state.type === 'action' || state.type === 'end') return settle(step, { to: service.start }, history);
  if (state.requiresLogin && !step.context.isAuthenticated)
    return settle(step, { to: service.loginRequired, notice: message(service.messages.loginRequired, step) }, history);
  const nav = service.navigation;
  const page = session.page ?? 0;
  if (input === nav.more || (input === nav.back && page > 0)) {
    return andThen(turnPage(step, state, input === nav.more ? page + 1 : page - 1), (move) =>
      move ? settle(step, move, history) : afterPaging(step, state, history),
    );
  }
  return afterPaging(step, state, history);
}

/** The input on a state, once it is not a page turn. */
function afterPaging(step: Step, state: CompiledState, history: ConsumedHistory): Maybe<MenuStep> {
  const { service, input } = step;
  const nav = service.navigation;
  if (input === nav.exit && state.exit) return end(step, state.exit, history, undefined, 'exit');
  if (input === nav.home && state.home) return settle(step, { to: service.home }, history);
  if (input === nav.back && state.back) return settle(step, { to: state.back }, history);
  return andThen(handle(step, state), (move) => settle(step, move, history));
}

function stepOf(
  service: CompiledService,
  session: UssdSession,
  input: string,
  deps: EngineDeps,
  values: Record<string, string>,
): Step {
  const language = languageIndex(service, session.language);
  return {
    service,
    session,
    language,
    input,
    values,
    said: undefined,
    context: session.context,
    account: undefined,
    deps,
    deadline: deps.callsDeadline ?? deps.now() + 5_000,
    outbox: undefined,
  };
}

/** The index of `language` in the service, its default language when it has no such language. */
function languageIndex(service: CompiledService, language: string | undefined): number {
  return (language === undefined ? undefined : service.languageIndex.get(language)) ?? service.defaultLanguage;
}

/** The state's answer to an input that is not navigation. */
function handle(step: Step, state: CompiledState): Maybe<Move> {
  const { service, input } = step;
  if (state.ask) return askMove(step, state);
  if (state.input) {
    const spec = state.input;
    if (spec.skip && input === spec.skip.key) {
      if (spec.save) delete step.values[spec.save];
      return { to: spec.skip.next };
    }
    const checked = spec.check(input, {
      phoneNumber: step.session.phoneNumber,
      holdsPin: (name, pin) => {
        const stored = step.values[name];
        return stored !== undefined && step.deps.pinCipher.matches(stored, pin, step.session.sessionId);
      },
    });
    if (!checked.ok) return follow(step, spec.refusals.get(checked.reason) ?? spec.invalid);
    if (spec.save)
      step.values[spec.save] = spec.secret
        ? step.deps.pinCipher.encrypt(checked.value, step.session.sessionId)
        : checked.value;
    return { to: spec.next };
  }
  const choices = state.byKey.get(input);
  const lookup = lookupOf(step);
  const chosen = choices?.find((option) => !option.when || holds(option.when, lookup));
  if (!chosen) return { to: state, notice: message(service.messages.invalidChoice, step) };
  if (chosen.set) assign(step, chosen.set);
  if (chosen.resume) return { to: resumeChoice(service, step.values, chosen.resume) };
  if (chosen.language === undefined) return { to: chosen.next };
  step.language = chosen.language;
  const code = service.languages[chosen.language] ?? '';
  return andThen(step.deps.rememberLanguage?.(service.id, step.session.phoneNumber, code), () => ({ to: chosen.next }));
}

function follow(step: Step, branch: CompiledBranch): Move {
  if (branch.set) assign(step, branch.set);
  return branch.notice ? { to: branch.next, notice: message(branch.notice, step) } : { to: branch.next };
}

function assign(step: Step, set: readonly (readonly [string, Template])[]): void {
  const lookup = lookupOf(step);
  for (const [name, template] of set) step.values[name] = fill(template, lookup);
}

/** The move to page `page` of the state's screen, or undefined when it has no such page. */
function turnPage(step: Step, state: CompiledState, page: number): Maybe<Move | undefined> {
  if (page < 0) return undefined;
  return andThen(loadAccount(step, state), () => {
    const pages = pagesOf(step.service, state, step.language, undefined, lookupOf(step));
    return page < pages.length && pages.length > 1 ? { to: state, page } : undefined;
  });
}

/** Runs the action states on the way, then renders where the step lands (or ends the session). */
function settle(step: Step, move: Move, history: ConsumedHistory, hops = 0): Maybe<MenuStep> {
  const { to } = move;
  if (to.action && hops < MAX_HOPS) {
    const action = to.action;
    return andThen(runStateAction(step, to), (done) => {
      if (done.values) Object.assign(step.values, done.values);
      if (done.said) step.said = { ...step.said, ...done.said };
      if (done.context) step.context = changed(step.context, done.context);
      const branch = action.outcomes.get(done.outcome);
      if (!branch) return settle(step, { to: step.service.start }, history, hops + 1);
      return settle(step, follow(step, branch), history, hops + 1);
    });
  }
  if (to.type === 'end' || to.action) return end(step, to.body, history, to);
  if (to.requiresLogin && !step.context.isAuthenticated)
    return settle(
      step,
      { to: step.service.loginRequired, notice: message(step.service.messages.loginRequired, step) },
      history,
      hops + 1,
    );
  // An answer belongs to the ask state's visit: leaving it forgets the turn and its answer.
  if (to.name !== step.session.state) {
    delete step.values[ASK_TURN];
    delete step.values[ASK_ANSWER];
  }
  // Entering an ask state shows the answer of a turn that ended after its session did (kept on the account).
  const entering = to.ask !== undefined && to.name !== step.session.state && step.context.customerId !== undefined;
  return andThen(entering ? takeKept(step, to) : undefined, () => {
    const pending = kept(step.values, to.keep);
    return andThen(loadAccount(step, to), () => {
      const lookup = lookupOf(step);
      const notice = move.notice === undefined ? undefined : fill(move.notice, lookup);
      const pages = pagesOf(step.service, to, step.language, notice, lookup);
      const page = Math.min(move.page ?? 0, pages.length - 1);
      const session = nextSession(step, to.name, pending, history, page);
      const result = shown(session, step.context, 'CON ', pages[page] ?? '');
      if (step.ask) result.ask = step.ask;
      return result;
    });
  });
}

function end(
  step: Step,
  text: readonly Template[],
  history: ConsumedHistory,
  state?: CompiledState,
  reason: 'end' | 'exit' = 'end',
): Maybe<MenuStep> {
  return andThen(state ? loadAccount(step, state) : undefined, () => {
    const message = fill(text[step.language] ?? '', lookupOf(step));
    const ended = shown(nextSession(step, ENDED_STATE, undefined, history, 0), step.context, 'END ', message);
    ended.endReason = reason;
    return ended;
  });
}

function message(text: readonly Template[], step: Step): Template {
  return text[step.language] ?? '';
}
