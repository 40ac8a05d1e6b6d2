// Thread: any (load and the checker)
// Proves every screen of a compiled service fits its limit, in every
// language, on every page, with each notice that can show above it, and with every value at the longest it can
// be (an input's longest accepted answer, an account field's longest, an action's longest output). Paging splits
// a screen at line boundaries, so what cannot fit is an option line or a word longer than a page, or an END text
// (never paged) longer than the limit. The same renderer as a step (render.ts) draws every screen here.
import { ACTION_SPECS } from './actions.js';
import { RESUME_STATE, type CompiledService, type CompiledState, type PerLanguage } from './compile.js';
import type { ServiceDefinition, Validation } from './definition.js';
import type { Problem } from './parse.js';
import { pagesOf, type Lookup } from './render.js';
import { fill, type Template } from './template.js';

/** The longest an account field shown as `{{account.*}}` is (a name is cut at 60 when an account is made here). */
const ACCOUNT_FIELDS: Record<string, number> = {
  customerId: 9,
  fullName: 60,
  firstName: 24,
  phoneNumber: 16,
  email: 64,
};
/** The longest of each value an action writes or says. */
const ACTION_VALUES: Record<string, number> = { createdId: 9, attemptsLeft: 2, lockMinutes: 5, lockUntil: 20 };

/** The longest accepted answer of an input (its saved value). */
function longestInput(validation: Validation | undefined): number {
  if (!validation) return 182;
  switch (validation.kind) {
    case 'text':
    case 'email':
      return validation.maxLength ?? 182;
    case 'number': {
      const widest = Math.max(
        ...[validation.min, validation.max].map((n) =>
          n === undefined || !Number.isFinite(n) ? 16 : String(n).length,
        ),
      );
      return Math.min(16, widest);
    }
    case 'phone':
      return 16;
    case 'date':
      return 8;
    case 'customerId':
      return 9;
    case 'pin':
      return 0;
  }
}

/** The longest each value name a service's texts may read can be. */
export function longestValues(service: CompiledService): Map<string, number> {
  const definition: ServiceDefinition = service.definition;
  const longest = new Map<string, number>();
  const note = (name: string, length: number) => longest.set(name, Math.max(longest.get(name) ?? 0, length));
  for (const [field, length] of Object.entries(ACCOUNT_FIELDS)) note(`account.${field}`, length);
  note('session.phoneNumber', 16);
  note('session.loggedIn', 4);
  note('session.language', Math.max(...service.languages.map((code) => code.length)));
  for (const state of Object.values(definition.states)) {
    if (state.type === 'input' && state.save) note(state.save, longestInput(state.validate));
    if (state.type === 'action') {
      const spec = ACTION_SPECS[state.action];
      for (const name of [...spec.writes, ...spec.says]) note(name, ACTION_VALUES[name] ?? 20);
    }
  }
  // Values set by options and branches are templates of other values: twice over, so one set from another counts.
  for (let round = 0; round < 2; round++)
    for (const state of service.states.values()) {
      const sets = [
        ...state.options.flatMap((option) => option.set ?? []),
        ...(state.input ? [state.input.invalid, ...state.input.refusals.values()].flatMap((b) => b.set ?? []) : []),
        ...(state.action ? [...state.action.outcomes.values()].flatMap((b) => b.set ?? []) : []),
      ];
      for (const [name, template] of sets) note(name, fill(template, worstLookup(longest)).length);
    }
  return longest;
}

/** Each value at its longest: one word of `x` (a word is never split, so no space is the worst case). */
export function worstLookup(longest: ReadonlyMap<string, number>): Lookup {
  return (name) => {
    const length = longest.get(name);
    return length ? 'x'.repeat(length) : undefined;
  };
}

/** Each state's notices that can show above it, per language: Invalid choice, login required, branch notices. */
export function noticesOf(service: CompiledService): Map<CompiledState, PerLanguage<Template>[]> {
  const notices = new Map<CompiledState, PerLanguage<Template>[]>();
  const add = (state: CompiledState, notice: PerLanguage<Template> | undefined) => {
    if (notice) notices.set(state, [...(notices.get(state) ?? []), notice]);
  };
  if ([...service.states.values()].some((state) => state.requiresLogin))
    add(service.loginRequired, service.messages.loginRequired);
  for (const state of service.states.values()) {
    if (state.type === 'menu' || state.type === 'language') add(state, service.messages.invalidChoice);
    const branches = [
      ...(state.input ? [state.input.invalid, ...state.input.refusals.values()] : []),
      ...(state.action ? state.action.outcomes.values() : []),
    ];
    for (const branch of branches) add(branch.next, branch.notice);
  }
  return notices;
}

export function screenProblems(
  service: CompiledService,
  file: string,
  lineOf: (path: readonly (string | number)[]) => number,
): Problem[] {
  const problems: Problem[] = [];
  const add = (path: (string | number)[], message: string) =>
    problems.push({ file, line: lineOf(path), path: path.join('.'), message });
  const longest = longestValues(service);
  const lookup = worstLookup(longest);
  const notices = noticesOf(service);
  const room = service.limit - 4;
  const over = (text: string) => `${text.length + 4} characters, over the limit of ${service.limit}`;
  for (const state of service.states.values()) {
    const at = state.name === RESUME_STATE ? ['resume'] : ['states', state.name];
    service.languages.forEach((language, l) => {
      if (state.exit) {
        const text = fill(state.exit[l] ?? '', lookup);
        if (text.length > room)
          add([...at, 'exit'], `the exit screen (${language}) is ${over(text)} (END is never paged)`);
      }
      if (state.type === 'end') {
        const text = fill(state.body[l] ?? '', lookup);
        if (text.length > room)
          add([...at, 'text'], `the END screen (${language}) is ${over(text)} (END is never paged)`);
        return;
      }
      if (state.type === 'action') return;
      const shown: [string, Template | undefined][] = [
        ['', undefined],
        ...(notices.get(state) ?? []).map((n): [string, Template | undefined] => [' under a notice', n[l]]),
      ];
      // Under a notice only when the screen fits alone: one problem per page that does not.
      for (const [under, notice] of shown) {
        const filled = notice === undefined ? undefined : fill(notice, lookup);
        const pages = pagesOf(service, state, l, filled, lookup, true);
        const before = problems.length;
        pages.forEach((page, p) => {
          if (page.length <= room) return;
          const line = longestLine(page);
          const option = state.options.findIndex((o) => fill(o.line[l] ?? '', lookup) === line);
          add(
            option < 0
              ? at
              : state.name === RESUME_STATE
                ? ['resume', option === 0 ? 'continue' : 'restart', 'text']
                : [...at, 'options', option, 'text'],
            `page ${p + 1} of ${pages.length} (${language})${under} is ${over(page)}: its longest line is ${line.length} characters (${JSON.stringify(line.length > 40 ? `${line.slice(0, 37)}...` : line)})`,
          );
        });
        if (pages.length > 1 && !state.back)
          state.options.forEach((option, index) => {
            if (option.key === service.navigation.back)
              add(
                [...at, 'options', index, 'key'],
                `the key ${option.key} is Back on page 2 and later (${language}), so it is never chosen there`,
              );
          });
        if (problems.length > before) break;
      }
    });
  }
  return dedupe(problems);
}

function longestLine(page: string): string {
  return page.split('\n').reduce((a, b) => (b.length > a.length ? b : a), '');
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}|${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
