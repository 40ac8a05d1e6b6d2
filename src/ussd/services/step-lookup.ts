// Thread: actor host
// What a step's templates read (engine.ts): the values said this step or saved in the session, the logged-in
// account (read once per step, only when the state's texts show it), and the session itself.
import type { CompiledState } from './compile.js';
import type { Maybe, Step } from './engine.js';
import type { Lookup } from './render.js';

/** The values a template may read: said this step, saved in the session, the account, the session itself. */
export function lookupOf(step: Step): Lookup {
  return (name) => {
    const said = step.said?.[name];
    if (said !== undefined) return said;
    const value = step.values[name];
    if (value !== undefined) return value;
    if (name.startsWith('account.')) return step.account?.[name.slice(8)];
    if (name === 'session.loggedIn') return step.context.isAuthenticated ? 'true' : undefined;
    if (name === 'session.phoneNumber') return step.session.phoneNumber;
    if (name === 'session.language') return step.service.languages[step.language];
    return undefined;
  };
}

/** Reads the logged-in account once per step, when the state's texts show it. */
export function loadAccount(step: Step, state: CompiledState): Maybe<void> {
  if (!state.readsAccount || step.account) return;
  const customerId = step.context.customerId;
  if (customerId === undefined) return void (step.account = {});
  return step.deps.customers.get(customerId).then((customer) => {
    step.account = customer
      ? {
          customerId: customer.customerId,
          fullName: customer.fullName,
          firstName: firstName(customer.fullName),
          phoneNumber: customer.phoneNumber,
          ...(customer.email === undefined ? {} : { email: customer.email }),
        }
      : {};
  });
}

/** The first word of a name, at most 24 characters (a greeting). */
function firstName(fullName: string): string {
  const first = fullName.split(' ')[0] ?? fullName;
  return first.length <= 24 ? first : `${first.slice(0, 22)}..`;
}
