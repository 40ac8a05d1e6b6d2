// Thread: any
// A checked definition compiled once into tables: states by name with their
// references resolved, every text split into a template per language, option lines and navigation lines
// ready, and the screens that depend on nothing rendered (and paged) in advance. A step is then lookups and
// template fills. The definition must have passed the rules (rules.ts): a dangling reference throws here.
import type { ActionName, Branch, Condition, ServiceDefinition, StateDefinition, Text } from './definition.js';
import { ACTION_SPECS } from './actions.js';
import { compileCheck, type InputCheck } from './input-checks.js';
import { paginate, type Layout } from './paging.js';
import { compileTemplate, slotsOf, type Template } from './template.js';
import { compileRequest, type CompiledRequest } from './webhook/request.js';

/** One entry per language of the service, in the order of its `languages`. */
export type PerLanguage<T> = readonly T[];

export interface CompiledBranch {
  next: CompiledState;
  notice?: PerLanguage<Template>;
  set?: readonly (readonly [string, Template])[];
}

export interface CompiledOption {
  key: string;
  next: CompiledState;
  when?: Condition;
  set?: readonly (readonly [string, Template])[];
  /** `1. Know More`, per language. */
  line: PerLanguage<Template>;
  /** Set for the options of a `language` state: the language chosen. */
  language?: number;
  /** Set for the options of the resume offer (RESUME_STATE). */
  resume?: 'continue' | 'restart';
}

/**
 * The state of a session shown the resume offer: a menu compiled from the definition's `resume` (never a name in a
 * file: names start with a letter). Its session holds the saved values and these two, read by the choice.
 */
export const RESUME_STATE = '@resume';
export const RESUME_AT = '@state';
export const RESUME_START = '@start';

export interface CompiledState {
  name: string;
  type: StateDefinition['type'];
  /** Menu text, input prompt, language title or closing text. */
  body: PerLanguage<Template>;
  options: readonly CompiledOption[];
  /** Options by key, in definition order (several when conditions tell them apart). */
  byKey: ReadonlyMap<string, readonly CompiledOption[]>;
  back?: CompiledState;
  home: boolean;
  exit?: PerLanguage<Template>;
  requiresLogin: boolean;
  keep?: readonly string[];
  shorten?: readonly string[];
  /** Navigation lines (back, home, exit) per language. */
  nav: PerLanguage<readonly string[]>;
  /** Whether a text of this state reads the logged-in account (`account.*`): the step loads it. */
  readsAccount: boolean;
  /** The pages when the screen depends on nothing (no template, no condition), per language. */
  fixedPages?: PerLanguage<readonly string[]>;
  /** Length of the longest notice that can show above this screen, per language (room kept by `shorten`). */
  longestNotice: PerLanguage<number>;
  input?: {
    check: InputCheck;
    save?: string;
    /** A PIN: saved encrypted. */
    secret: boolean;
    next: CompiledState;
    invalid: CompiledBranch;
    refusals: ReadonlyMap<string, CompiledBranch>;
    skip?: { key: string; next: CompiledState };
  };
  action?: { name: ActionName; outcomes: ReadonlyMap<string, CompiledBranch>; request?: CompiledRequest };
  languageNext?: CompiledState;
}

export interface CompiledService {
  id: string;
  version: string;
  /** `id@version`, the session's pin to this version. */
  key: string;
  name: string;
  languages: readonly string[];
  languageIndex: ReadonlyMap<string, number>;
  defaultLanguage: number;
  navigation: { back: string; home: string; exit: string; more: string };
  labels: { back: PerLanguage<string>; more: PerLanguage<string> };
  messages: { invalidChoice: PerLanguage<Template>; loginRequired: PerLanguage<Template> };
  /** Longest answer, `CON `/`END ` included. */
  limit: number;
  start: CompiledState;
  home: CompiledState;
  loginRequired: CompiledState;
  states: ReadonlyMap<string, CompiledState>;
  /** Service code → the state it starts at. */
  codes: ReadonlyMap<string, CompiledState>;
  /** Continue after a timeout (resume.ts); absent when the definition has no `resume`. */
  resume?: CompiledResume;
  definition: ServiceDefinition;
}

export interface CompiledResume {
  withinMs: number;
  /** The offer: a menu of the continue and restart options, in `states` under RESUME_STATE. */
  offer: CompiledState;
  /** The values a saved point never holds: PINs, and what actions give (ussd-resume.md). */
  forget: ReadonlySet<string>;
  /** The values saved by a PIN input: while the session holds one, the saved point does not move. */
  secrets: ReadonlySet<string>;
  /** The states a saved point may be at: screens showing no account field and no forgotten value. */
  resumable: ReadonlySet<CompiledState>;
}

/** Compiles a definition that passed the rules. */
export function compileService(definition: ServiceDefinition): CompiledService {
  const languages = Object.keys(definition.languages);
  const per = (text: Text): PerLanguage<Template> =>
    languages.map((language) => compileTemplate(typeof text === 'string' ? text : (text[language] ?? '')));
  const literal = (text: Text): PerLanguage<string> =>
    languages.map((language) => (typeof text === 'string' ? text : (text[language] ?? '')));
  const states = new Map<string, CompiledState>();
  const entries = stateEntries(definition);
  for (const [name] of entries) states.set(name, { name } as CompiledState);
  const state = (name: string): CompiledState => {
    const found = states.get(name);
    if (!found) throw new Error(`${definition.id}: no state ${JSON.stringify(name)}`);
    return found;
  };
  const branch = (b: Branch): CompiledBranch => ({
    next: state(b.next),
    ...(b.notice === undefined ? {} : { notice: per(b.notice) }),
    ...(b.set === undefined ? {} : { set: assignments(b.set) }),
  });
  const nav = definition.navigation;
  const labels = {
    back: literal(definition.labels.back),
    home: literal(definition.labels.home),
    exit: literal(definition.labels.exit),
    more: literal(definition.labels.more),
  };

  /** The states whose screens depend on nothing: paged once their longest notice is known. */
  const fixed: (CompiledState & Record<string, unknown>)[] = [];
  for (const [name, def] of entries) {
    const target = states.get(name) as CompiledState & Record<string, unknown>;
    const options: CompiledOption[] =
      def.type === 'menu'
        ? def.options.map((option) => ({
            key: option.key,
            next: state(option.next),
            ...(option.when ? { when: option.when } : {}),
            ...(option.set ? { set: assignments(option.set) } : {}),
            line: literal(option.text).map((text) => compileTemplate(`${option.key}. ${text}`)),
          }))
        : def.type === 'language'
          ? languages.map((language, index) => ({
              key: String(index + 1),
              next: state(def.next),
              line: languages.map(() => `${index + 1}. ${definition.languages[language]}`),
              language: index,
            }))
          : [];
    const byKey = new Map<string, CompiledOption[]>();
    for (const option of options) byKey.set(option.key, [...(byKey.get(option.key) ?? []), option]);
    const body = per('text' in def ? def.text : def.type === 'input' ? def.prompt : '');
    const navLines = languages.map((_, l) => [
      ...(def.back ? [`${nav.back}. ${labels.back[l]}`] : []),
      ...(def.home ? [`${nav.home}. ${labels.home[l]}`] : []),
      ...(def.exit !== undefined ? [`${nav.exit}. ${labels.exit[l]}`] : []),
    ]);
    const templates = [...body, ...options.flatMap((option) => option.line)];
    const dynamic = templates.some((t) => typeof t !== 'string') || options.some((option) => option.when);
    Object.assign(target, {
      type: def.type,
      body,
      options,
      byKey,
      ...(def.back ? { back: state(def.back) } : {}),
      home: def.home === true,
      ...(def.exit !== undefined ? { exit: per(def.exit) } : {}),
      requiresLogin: def.requiresLogin === true,
      ...(def.keep ? { keep: def.keep } : {}),
      ...(def.shorten ? { shorten: def.shorten } : {}),
      nav: navLines,
      readsAccount: [...templates, ...(def.exit !== undefined ? per(def.exit) : [])].some((t) =>
        slotsOf(t).some((slot) => slot.startsWith('account.')),
      ),
      longestNotice: languages.map(() => 0),
    });
    if (!dynamic && def.type !== 'end' && def.type !== 'action') fixed.push(target);
    if (def.type === 'input') {
      const refusals = new Map<string, CompiledBranch>();
      for (const [reason, refusal] of Object.entries(def.refusals ?? {})) refusals.set(reason, branch(refusal));
      target.input = {
        check: compileCheck(def.validate),
        ...(def.save === undefined ? {} : { save: def.save }),
        secret: def.validate?.kind === 'pin',
        next: state(def.next),
        invalid: branch(def.invalid),
        refusals,
        ...(def.skip ? { skip: { key: def.skip.key, next: state(def.skip.next ?? def.next) } } : {}),
      };
    }
    if (def.type === 'action') {
      const outcomes = new Map<string, CompiledBranch>();
      for (const [outcome, b] of Object.entries(def.outcomes)) outcomes.set(outcome, branch(b));
      target.action = {
        name: def.action,
        outcomes,
        ...(def.request === undefined ? {} : { request: compileRequest(def.request) }),
      };
    }
    if (def.type === 'language') target.languageNext = state(def.next);
  }

  const messages = {
    invalidChoice: per(definition.messages.invalidChoice),
    loginRequired: per(definition.messages.loginRequired),
  };
  noteLongestNotices(
    states,
    languages,
    messages,
    state(definition.loginRequired ?? definition.home ?? definition.start),
  );
  for (const target of fixed) {
    target.fixedPages = languages.map((_, l) =>
      paginate(
        layoutOf(target, l, undefined),
        definition.screenLimit - 4,
        { more: `${nav.more}. ${labels.more[l]}`, back: `${nav.back}. ${labels.back[l]}` },
        target.longestNotice[l],
      ),
    );
  }
  const start = state(definition.start);
  const home = state(definition.home ?? definition.start);
  const codes = new Map<string, CompiledState>();
  for (const code of definition.serviceCodes) {
    if (typeof code === 'string') codes.set(code, start);
    else codes.set(code.code, state(code.start));
  }
  const resume = definition.resume && compileResume(definition, states);
  return {
    ...(resume ? { resume } : {}),
    id: definition.id,
    version: definition.version,
    key: `${definition.id}@${definition.version}`,
    name: definition.name ?? definition.id,
    languages,
    languageIndex: new Map(languages.map((language, index) => [language, index])),
    defaultLanguage: Math.max(0, languages.indexOf(definition.defaultLanguage)),
    navigation: nav,
    labels: { back: labels.back, more: labels.more },
    messages,
    limit: definition.screenLimit,
    start,
    home,
    loginRequired: state(definition.loginRequired ?? definition.home ?? definition.start),
    states,
    codes,
    definition,
  };
}

/** The screen of `state` in language `l` as text lines, option lines and navigation, before paging. */
export function layoutOf(
  state: CompiledState,
  l: number,
  notice: string | undefined,
  body?: string,
  options?: readonly string[],
): Layout {
  const text = body ?? (state.body[l] as string);
  const lines = [...(notice ? notice.split('\n') : []), ...(text === '' ? [] : text.split('\n'))];
  return {
    lines,
    options: options ?? state.options.map((option) => option.line[l] as string),
    nav: state.nav[l] ?? [],
    hasBack: state.back !== undefined,
  };
}

/** The definition's states, and the resume offer when it has one (a menu whose options the engine answers). */
function stateEntries(definition: ServiceDefinition): [string, StateDefinition][] {
  const entries = Object.entries(definition.states);
  const resume = definition.resume;
  if (!resume) return entries;
  const { continue: go, restart } = resume;
  const options = [go, restart].map((option) => ({ ...option, next: definition.start }));
  return [...entries, [RESUME_STATE, { type: 'menu', text: resume.text, options }]];
}

function compileResume(definition: ServiceDefinition, states: Map<string, CompiledState>): CompiledResume {
  const offer = states.get(RESUME_STATE) as CompiledState;
  const [go, restart] = offer.options as (CompiledOption & { resume?: string })[];
  if (go) go.resume = 'continue';
  if (restart) restart.resume = 'restart';
  const secrets = new Set<string>();
  const forget = new Set<string>();
  for (const state of Object.values(definition.states)) {
    if (state.type === 'input' && state.validate?.kind === 'pin' && state.save) secrets.add(state.save);
    if (state.type !== 'action') continue;
    const spec = ACTION_SPECS[state.action];
    for (const name of [...spec.writes, ...spec.says, ...Object.keys(state.request?.save ?? {})]) forget.add(name);
    for (const outcome of Object.values(state.outcomes))
      for (const name of Object.keys(outcome.set ?? {})) forget.add(name);
  }
  for (const name of secrets) forget.add(name);
  const resumable = new Set<CompiledState>();
  for (const state of states.values()) {
    if (state.name === RESUME_STATE || state.requiresLogin || state.readsAccount) continue;
    if (state.type !== 'menu' && state.type !== 'input' && state.type !== 'language') continue;
    const texts = [...state.body, ...state.options.flatMap((option) => option.line)];
    if (!texts.some((text) => slotsOf(text).some((slot) => forget.has(slot)))) resumable.add(state);
  }
  return { withinMs: (definition.resume?.withinSeconds ?? 0) * 1000, offer, forget, secrets, resumable };
}

function assignments(set: Record<string, string>): (readonly [string, Template])[] {
  return Object.entries(set).map(([name, text]) => [name, compileTemplate(text)] as const);
}

/**
 * Sets each state's longestNotice: Invalid choice on a menu, Please log in first on the login state, and every
 * notice of a branch leading to it.
 */
function noteLongestNotices(
  states: Map<string, CompiledState>,
  languages: readonly string[],
  messages: { invalidChoice: PerLanguage<Template>; loginRequired: PerLanguage<Template> },
  loginRequired: CompiledState,
): void {
  const note = (state: CompiledState | undefined, notice: PerLanguage<Template> | undefined) => {
    if (!state || !notice) return;
    (state as { longestNotice: PerLanguage<number> }).longestNotice = languages.map((_, l) =>
      Math.max(state.longestNotice[l] ?? 0, templateLength(notice[l] ?? '')),
    );
  };
  note(loginRequired, messages.loginRequired);
  for (const state of states.values()) {
    if (state.type === 'menu' || state.type === 'language') note(state, messages.invalidChoice);
    const branches = [
      ...(state.input ? [state.input.invalid, ...state.input.refusals.values()] : []),
      ...(state.action ? state.action.outcomes.values() : []),
    ];
    for (const b of branches) note(b.next, b.notice);
  }
}

/** The length of a template's literal parts (its values are not known at load). */
function templateLength(template: Template): number {
  return typeof template === 'string'
    ? template.length
    : template.reduce<number>((n, p) => n + (typeof p === 'string' ? p.length : 0), 0);
}
