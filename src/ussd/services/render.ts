// Thread: any
// One screen of a compiled state: its texts filled from the step's values, options whose condition
// holds, navigation lines, shortened values where the state allows it, then paged. A screen that depends on
// nothing is a lookup in the pages compiled at load.
import type { Condition } from './definition.js';
import type { CompiledService, CompiledState } from './compile.js';
import { layoutOf } from './compile.js';
import { paginate, withNotice } from './paging.js';
import { fill, shorten, type Template } from './template.js';

/** Looks a value up by name (`fullName`, `account.customerId`, `session.loggedIn`); undefined when missing. */
export type Lookup = (name: string) => string | undefined;

/** Whether `condition` holds: `equals` compares, `set` asks for a value (or none); alone, a value must be set. */
export function holds(condition: Condition, lookup: Lookup): boolean {
  const value = lookup(condition.value);
  if (condition.equals !== undefined) return value === condition.equals;
  const isSet = value !== undefined && value !== '';
  return condition.set === false ? !isSet : isSet;
}

/**
 * The pages of `state`'s screen in language `l` with `notice` above it. `every`: every option, whatever its
 * condition (the checker's longest screen).
 */
export function pagesOf(
  service: CompiledService,
  state: CompiledState,
  l: number,
  notice: string | undefined,
  lookup: Lookup,
  every = false,
): readonly string[] {
  const room = service.limit - 4;
  const pages = state.fixedPages?.[l] ?? renderPages(service, state, l, lookup, room, every);
  return notice === undefined || notice === '' ? pages : withNotice(pages, notice, room);
}

/** The pages of a screen that depends on the step's values (no notice: it goes above the first page). */
function renderPages(
  service: CompiledService,
  state: CompiledState,
  l: number,
  lookup: Lookup,
  room: number,
  every: boolean,
): readonly string[] {
  const values = state.shorten ? shortened(service, state, l, lookup) : lookup;
  const body = fill(state.body[l] ?? '', values);
  const shown = new Set<string>();
  const options: string[] = [];
  for (const option of state.options) {
    if (!every && (shown.has(option.key) || (option.when && !holds(option.when, lookup)))) continue;
    shown.add(option.key);
    options.push(fill(option.line[l] ?? '', values));
  }
  const labels = {
    more: `${service.navigation.more}. ${service.labels.more[l]}`,
    back: `${service.navigation.back}. ${service.labels.back[l]}`,
  };
  return paginate(layoutOf(state, l, undefined, body, options), room, labels, state.longestNotice[l]);
}

/**
 * `lookup` with the state's `shorten` values cut so the screen fits with room for its longest notice: in order,
 * each gets the room left less what the ones after it need, but at least half of that room.
 */
function shortened(service: CompiledService, state: CompiledState, l: number, lookup: Lookup): Lookup {
  const names = state.shorten ?? [];
  const template = state.body[l] ?? '';
  const full = (name: string) => lookup(name) || fallbackOf(template, name);
  // The screen without the values to cut (not even their fallbacks): the marker stands in for them.
  const empty = (name: string) => (names.includes(name) ? '\u0000' : lookup(name));
  const bare = [fill(template, empty).replaceAll('\u0000', ''), ...(state.nav[l] ?? [])].join('\n');
  let room = service.limit - 4 - bare.length - ((state.longestNotice[l] ?? 0) + 1);
  const cut = new Map<string, string>();
  names.forEach((name, index) => {
    const later = names.slice(index + 1).reduce((sum, other) => sum + full(other).length, 0);
    const value = shorten(full(name), room - Math.min(later, room / 2));
    cut.set(name, value);
    room -= value.length;
  });
  return (name) => cut.get(name) ?? lookup(name);
}

function fallbackOf(template: Template, name: string): string {
  if (typeof template === 'string') return '';
  for (const part of template) if (typeof part !== 'string' && part.name === name) return part.fallback;
  return '';
}
