// Thread: any (load and the checker)
// Every value name a step of a definition can read: what its inputs save,
// its options and branches set, its actions write, say or save from an answer, the logged-in account's fields
// and the session's own. A name outside these is never set, so a definition that reads one is refused.
import { ACTION_SPECS } from './actions.js';
import type { Branch, ServiceDefinition } from './definition.js';

/** The fields of the logged-in account a template reads as `{{account.<field>}}`. */
export const ACCOUNT_FIELDS = ['customerId', 'fullName', 'firstName', 'phoneNumber', 'email'] as const;
/** The session's own values. */
export const SESSION_VALUES = ['session.phoneNumber', 'session.loggedIn', 'session.language'] as const;

export function flowValues(definition: ServiceDefinition): Set<string> {
  const names = new Set<string>([...ACCOUNT_FIELDS.map((field) => `account.${field}`), ...SESSION_VALUES]);
  const sets = (branch: Branch | undefined) => {
    for (const name of Object.keys(branch?.set ?? {})) names.add(name);
  };
  for (const state of Object.values(definition.states)) {
    switch (state.type) {
      case 'menu':
        for (const option of state.options) for (const name of Object.keys(option.set ?? {})) names.add(name);
        break;
      case 'input':
        if (state.save) names.add(state.save);
        sets(state.invalid);
        for (const refusal of Object.values(state.refusals ?? {})) sets(refusal);
        break;
      case 'action': {
        const spec = ACTION_SPECS[state.action];
        for (const name of [...spec.writes, ...spec.says]) names.add(name);
        for (const name of Object.keys(state.request?.save ?? {})) names.add(name);
        for (const name of Object.keys(state.query?.save ?? {})) names.add(name);
        for (const branch of Object.values(state.outcomes)) sets(branch);
        break;
      }
      case 'language':
      case 'end':
        break;
    }
  }
  return names;
}
