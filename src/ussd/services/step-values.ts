// Thread: any (the actor hosts run it)
// The values of one step of the engine (engine.ts): what a template may read, the logged-in account loaded when a
// state's texts show it, and the values the state landed on keeps.
import type { PendingDraft } from '../session.js';
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

/** The values the target state keeps (all when it names none); undefined when nothing is left. */
export function kept(values: Record<string, string>, keep: readonly string[] | undefined): PendingDraft | undefined {
  let result: Record<string, string> | undefined;
  if (!keep) {
    for (const name in values) (result ??= {})[name] = values[name] as string;
    return result as PendingDraft | undefined;
  }
  for (const name of keep) {
    const value = values[name];
    if (value !== undefined) (result ??= {})[name] = value;
  }
  return result as PendingDraft | undefined;
}
