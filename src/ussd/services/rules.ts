// Thread: any (load and the checker)
// The rules of a definition across its fields, after its shape passed the
// schema: every state named exists, every text exists in every language of the service, actions branch on
// exactly their outcomes, patterns compile, PINs are never shown. A definition with any of these problems is
// refused at load (start: exit 78; reload: the running version stays).
import { ACTION_SPECS } from './actions.js';
import type { ServiceDefinition, StateDefinition, Text } from './definition.js';
import type { Problem } from './parse.js';
import { compileTemplate, slotsOf } from './template.js';
import { requestProblems } from './webhook/rules.js';

type Path = (string | number)[];

/** The problems found in `file`, and how a check adds one at a definition path (its line looked up). */
export function problemList(file: string, lineOf: (path: readonly (string | number)[]) => number) {
  const problems: Problem[] = [];
  const add = (path: Path, message: string) =>
    problems.push({ file, line: lineOf(path), path: path.join('.'), message });
  return { problems, add };
}

export function ruleProblems(
  definition: ServiceDefinition,
  file: string,
  lineOf: (path: readonly (string | number)[]) => number,
): Problem[] {
  const { problems, add } = problemList(file, lineOf);
  const languages = Object.keys(definition.languages);
  const states = definition.states;
  const exists = (name: string | undefined, path: Path) => {
    if (name !== undefined && !Object.hasOwn(states, name)) add(path, `no state named ${JSON.stringify(name)}`);
  };
  const secrets = new Set<string>();
  for (const state of Object.values(states))
    if (state.type === 'input' && state.validate?.kind === 'pin' && state.save) secrets.add(state.save);
  const text = (value: Text | undefined, path: Path) => {
    if (value === undefined) return;
    if (typeof value === 'string') {
      if (languages.length > 1)
        add(path, `one text for ${languages.length} languages: give one per language (${languages.join(', ')})`);
    } else {
      for (const language of languages) if (value[language] === undefined) add(path, `no ${language} text`);
      for (const language of Object.keys(value))
        if (!languages.includes(language)) add([...path, language], `${language} is not a language of this service`);
    }
    for (const each of typeof value === 'string' ? [value] : Object.values(value))
      for (const slot of slotsOf(compileTemplate(each)))
        if (secrets.has(slot)) add(path, `{{${slot}}} is a PIN: it is never shown`);
  };

  if (!languages.includes(definition.defaultLanguage))
    add(['defaultLanguage'], `${definition.defaultLanguage} is not one of the languages (${languages.join(', ')})`);
  const keys = Object.entries(definition.navigation);
  for (const [i, [name, key]] of keys.entries())
    for (const [other, otherKey] of keys.slice(i + 1))
      if (key === otherKey) add(['navigation', other], `${other} and ${name} share the key ${key}`);
  for (const [name, label] of Object.entries(definition.labels)) text(label, ['labels', name]);
  for (const [name, message] of Object.entries(definition.messages)) text(message, ['messages', name]);
  exists(definition.start, ['start']);
  exists(definition.home, ['home']);
  exists(definition.loginRequired, ['loginRequired']);
  const gate = definition.loginRequired ?? definition.home ?? definition.start;
  if (states[gate]?.requiresLogin)
    add(['loginRequired'], `${gate} requires login itself: a user who is not logged in has nowhere to go`);
  const codes = new Set<string>();
  definition.serviceCodes.forEach((entry, index) => {
    const code = typeof entry === 'string' ? entry : entry.code;
    if (codes.has(code)) add(['serviceCodes', index], `${code} is listed twice`);
    codes.add(code);
    if (typeof entry !== 'string') exists(entry.start, ['serviceCodes', index, 'start']);
  });
  const resume = definition.resume;
  if (resume) {
    text(resume.text, ['resume', 'text']);
    text(resume.continue.text, ['resume', 'continue', 'text']);
    text(resume.restart.text, ['resume', 'restart', 'text']);
    if (resume.continue.key === resume.restart.key)
      add(['resume', 'restart', 'key'], `continue and restart share the key ${resume.continue.key}`);
    for (const option of ['continue', 'restart'] as const)
      if (resume[option].key === definition.navigation.more)
        add(['resume', option, 'key'], `the key ${resume[option].key} is the more key: it is never chosen`);
  }
  for (const [name, state] of Object.entries(states)) {
    stateProblems(name, state, { add, exists, text });
    requestProblems(state, secrets, (path, message) => add(['states', name, ...path], message));
  }
  return problems;
}

interface Checks {
  add(path: Path, message: string): void;
  exists(name: string | undefined, path: Path): void;
  text(value: Text | undefined, path: Path): void;
}

function stateProblems(name: string, state: StateDefinition, { add, exists, text }: Checks): void {
  const at = (...path: Path): Path => ['states', name, ...path];
  exists(state.back, at('back'));
  text(state.exit, at('exit'));
  switch (state.type) {
    case 'menu':
      text(state.text, at('text'));
      state.options.forEach((option, index) => {
        exists(option.next, at('options', index, 'next'));
        text(option.text, at('options', index, 'text'));
      });
      break;
    case 'language':
    case 'end':
      text(state.text, at('text'));
      if (state.type === 'language') exists(state.next, at('next'));
      break;
    case 'input': {
      text(state.prompt, at('prompt'));
      exists(state.next, at('next'));
      exists(state.invalid.next, at('invalid', 'next'));
      text(state.invalid.notice, at('invalid', 'notice'));
      for (const [reason, refusal] of Object.entries(state.refusals ?? {})) {
        exists(refusal.next, at('refusals', reason, 'next'));
        text(refusal.notice, at('refusals', reason, 'notice'));
      }
      exists(state.skip?.next, at('skip', 'next'));
      const validate = state.validate;
      if (!validate) break;
      if (validate.pattern !== undefined) {
        try {
          new RegExp(validate.pattern, 'u');
        } catch (error) {
          add(at('validate', 'pattern'), `the pattern does not compile: ${(error as Error).message}`);
        }
      }
      if ((validate.sameAs || validate.differentFrom || validate.policy || validate.digits) && validate.kind !== 'pin')
        add(at('validate'), 'sameAs, differentFrom, policy and digits are for kind: pin');
      if ((validate.minLength ?? 0) > (validate.maxLength ?? Infinity))
        add(at('validate'), 'minLength is above maxLength');
      if ((validate.min ?? -Infinity) > (validate.max ?? Infinity)) add(at('validate'), 'min is above max');
      break;
    }
    case 'action': {
      const spec = ACTION_SPECS[state.action];
      for (const outcome of spec.outcomes)
        if (!Object.hasOwn(state.outcomes, outcome))
          add(at('outcomes'), `no branch for the outcome ${outcome} of ${state.action}`);
      for (const [outcome, branch] of Object.entries(state.outcomes)) {
        if (!spec.outcomes.includes(outcome))
          add(
            at('outcomes', outcome),
            `${state.action} has no outcome ${outcome} (it has ${spec.outcomes.join(', ')})`,
          );
        exists(branch.next, at('outcomes', outcome, 'next'));
        text(branch.notice, at('outcomes', outcome, 'notice'));
      }
      break;
    }
  }
}
