// Thread: any (load and the checker)
// The rules of a `query` state: it has a `query` (no other action has one),
// its path is one the gateway can be asked, and every {{value}} of it is a value the flow can have (values.ts)
// and never a PIN.
import type { StateDefinition } from '../definition.js';
import { compileTemplate, slotsOf } from '../template.js';
import { pathProblems } from './path.js';

export function queryProblems(
  state: StateDefinition,
  values: ReadonlySet<string>,
  secrets: ReadonlySet<string>,
  add: (path: (string | number)[], message: string) => void,
): void {
  if (state.type !== 'action') return;
  const { action, query } = state;
  if (action !== 'query') {
    if (query) add(['query'], `${action} takes no query (only the query action does)`);
    return;
  }
  if (!query) return add([], 'query needs a query: { path: /cosmos/... }');
  for (const problem of pathProblems(query.path)) add(['query', 'path'], problem);
  for (const name of new Set(slotsOf(compileTemplate(query.path)))) {
    if (secrets.has(name)) add(['query', 'path'], `{{${name}}} is a PIN: it is never sent`);
    else if (!values.has(name))
      add(['query', 'path'], `{{${name}}} is no value of this service: no input, option, branch or action sets it`);
  }
}
