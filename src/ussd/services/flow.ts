// Thread: any (load and the checker)
// The rules of a definition's flow, once every state it names exists
// (rules.ts): every state can be reached from a start, no screen leaves the user stuck, no two options share a
// key they cannot be told apart by, and no key of an option or a skip is a navigation key of its state (the
// navigation is taken first, so the option could never be chosen).
import type { Branch, ServiceDefinition, StateDefinition } from './definition.js';
import type { Problem } from './parse.js';
import { problemList } from './rules.js';

type Path = (string | number)[];

/** The states a state leads to, each with where in the file it is said. */
export function movesOf(definition: ServiceDefinition, state: StateDefinition): { to: string; path: Path }[] {
  const moves: { to: string; path: Path }[] = [];
  const branch = (b: Branch, path: Path) => moves.push({ to: b.next, path: [...path, 'next'] });
  if (state.back) moves.push({ to: state.back, path: ['back'] });
  if (state.home) moves.push({ to: definition.home ?? definition.start, path: ['home'] });
  switch (state.type) {
    case 'menu':
      for (const [index, option] of state.options.entries())
        moves.push({ to: option.next, path: ['options', index, 'next'] });
      break;
    case 'language':
      moves.push({ to: state.next, path: ['next'] });
      break;
    case 'input':
      moves.push({ to: state.next, path: ['next'] });
      branch(state.invalid, ['invalid']);
      for (const [reason, refusal] of Object.entries(state.refusals ?? {})) branch(refusal, ['refusals', reason]);
      if (state.skip) moves.push({ to: state.skip.next ?? state.next, path: ['skip'] });
      break;
    case 'action':
      for (const [outcome, b] of Object.entries(state.outcomes)) branch(b, ['outcomes', outcome]);
      break;
    case 'end':
      break;
  }
  return moves;
}

export function flowProblems(
  definition: ServiceDefinition,
  file: string,
  lineOf: (path: readonly (string | number)[]) => number,
): Problem[] {
  const { problems, add } = problemList(file, lineOf);
  const states = definition.states;

  // Reachable: from the start, each code's start, the home and login-required states, along every move.
  const roots = [
    definition.start,
    ...definition.serviceCodes.flatMap((entry) => (typeof entry === 'string' ? [] : [entry.start])),
    ...(definition.home ? [definition.home] : []),
    ...(definition.loginRequired ? [definition.loginRequired] : []),
  ];
  const reached = new Set<string>();
  const queue = roots.filter((name) => Object.hasOwn(states, name));
  while (queue.length > 0) {
    const name = queue.pop() as string;
    if (reached.has(name)) continue;
    reached.add(name);
    const state = states[name];
    if (state) for (const move of movesOf(definition, state)) if (!reached.has(move.to)) queue.push(move.to);
  }
  for (const name of Object.keys(states))
    if (!reached.has(name)) add(['states', name], `unreachable: no start, option, branch or back leads to ${name}`);

  for (const [name, state] of Object.entries(states)) {
    const at = (...path: Path): Path => ['states', name, ...path];
    if (state.type === 'menu' && state.options.length === 0 && !state.back && !state.home && state.exit === undefined)
      add(at(), 'a dead end: a menu with no option, back, home or exit (use type: end to close the session)');
    const navigation = activeNavigation(definition, state);
    const clash = (key: string, path: Path, what: string) => {
      const nav = navigation.get(key);
      if (nav) add(path, `${what} ${key} is the ${nav} key here: the ${nav} is taken first, so it is never chosen`);
    };
    if (state.type === 'input' && state.skip) clash(state.skip.key, at('skip', 'key'), 'the skip key');
    if (state.type !== 'menu') continue;
    state.options.forEach((option, index) => {
      clash(option.key, at('options', index, 'key'), 'the key');
      // The first option before this one with its key and a condition no different (none, or the same).
      const first = state.options.findIndex(
        (other, i) =>
          i < index &&
          other.key === option.key &&
          (!other.when || JSON.stringify(other.when) === JSON.stringify(option.when)),
      );
      const earlier = state.options[first];
      if (earlier)
        add(
          at('options', index, 'key'),
          `duplicate key ${option.key}: option ${first + 1} has it ${earlier.when ? 'under the same condition' : 'without a condition'}, so this one is never chosen`,
        );
    });
  }
  return problems;
}

/** The navigation keys a state answers before its own options: More always (a screen may page), the rest as offered. */
function activeNavigation(definition: ServiceDefinition, state: StateDefinition): Map<string, string> {
  const nav = definition.navigation;
  const keys = new Map<string, string>([[nav.more, 'more']]);
  if (state.back) keys.set(nav.back, 'back');
  if (state.home) keys.set(nav.home, 'home');
  if (state.exit !== undefined) keys.set(nav.exit, 'exit');
  return keys;
}
