// Thread: any (load and the checker)
// The rules of an `http` or `notify` state: it has a `request` (no other action
// has one), sends no PIN, and saves the answer only from `http`.
import { isRequestAction } from '../actions.js';
import type { StateDefinition } from '../definition.js';

export function requestProblems(
  state: StateDefinition,
  secrets: ReadonlySet<string>,
  add: (path: (string | number)[], message: string) => void,
): void {
  if (state.type !== 'action') return;
  const { action, request } = state;
  if (!isRequestAction(action)) {
    if (request) add(['request'], `${action} takes no request (only http and notify do)`);
    return;
  }
  if (!request) return add([], `${action} needs a request: { url: ... }`);
  for (const [index, value] of (request.values ?? []).entries())
    if (secrets.has(value)) add(['request', 'values', index], `${value} is a PIN: it is never sent`);
  if (action === 'notify' && request.save) add(['request', 'save'], 'notify saves nothing: its answer comes later');
  if (action === 'http' && request.attempts !== undefined)
    add(['request', 'attempts'], 'attempts are for notify: http retries connection failures within its timeout');
}
