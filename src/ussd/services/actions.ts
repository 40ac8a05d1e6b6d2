// Thread: any
// The built-in actions a definition's `action` states run, with today's account behaviour (create
// an account idempotently under gateway retries, log in with the lock counted on the account across dials and
// nodes, log out, change PIN). Each names the values it reads, the outcomes it branches on and the values it
// writes; the checker and the docs read ACTION_SPECS.
import type { CustomerAccounts } from '../actor/customer-accounts.js';
import type { PinCipher } from '../actor/pin-cipher.js';
import type { UssdContext, UssdSession } from '../session.js';
import type { ActionName } from './definition.js';

export interface ActionSpec {
  /** Session values it needs (saved by earlier states). */
  reads: readonly string[];
  /** Whether it uses the PIN typed in this step: it must follow an input state directly. */
  typedPin: boolean;
  outcomes: readonly string[];
  /** Values it saves in the session (kept as the next state's `keep` says). */
  writes: readonly string[];
  /** Values shown by this step's texts only, never stored. */
  says: readonly string[];
  /** Whether it logs the user in or out. */
  login?: boolean;
}

const PIN_OUTCOMES = ['ok', 'wrong', 'lastAttempt', 'locked', 'lockedNow', 'unknown'] as const;
const PIN_SAYS = ['attemptsLeft', 'lockMinutes', 'lockUntil'] as const;

export const ACTION_SPECS: Record<ActionName, ActionSpec> = {
  createAccount: {
    reads: ['fullName', 'pin'],
    typedPin: true,
    outcomes: ['created', 'incomplete'],
    writes: ['createdId'],
    says: [],
  },
  findAccount: {
    reads: ['loginId'],
    typedPin: false,
    outcomes: ['found', 'unknown', 'locked'],
    writes: [],
    says: PIN_SAYS,
  },
  logIn: { reads: ['loginId'], typedPin: true, outcomes: PIN_OUTCOMES, writes: [], says: PIN_SAYS, login: true },
  verifyPin: { reads: [], typedPin: true, outcomes: PIN_OUTCOMES, writes: [], says: PIN_SAYS },
  changePin: { reads: [], typedPin: true, outcomes: ['changed', 'gone'], writes: [], says: [] },
  logOut: { reads: [], typedPin: false, outcomes: ['done'], writes: [], says: [], login: true },
  // The values they send and save are the state's own (its `request`): webhook/run.ts, docs/ussd-actions.md.
  http: { reads: [], typedPin: false, outcomes: ['ok', 'failed', 'timeout'], writes: [], says: [] },
  notify: { reads: [], typedPin: false, outcomes: ['queued'], writes: [], says: [] },
  // Its path and the values it saves are the state's own (its `query`): query/step.ts, docs/ussd-actions.md.
  query: { reads: [], typedPin: false, outcomes: ['ok', 'not_found', 'unreachable'], writes: [], says: [] },
};

/** The actions that call out of the server: run by the engine with the state's `request`. */
export type RequestAction = 'http' | 'notify';
export const isRequestAction = (name: ActionName): name is RequestAction => name === 'http' || name === 'notify';

export interface ActionDeps {
  customers: CustomerAccounts;
  pinCipher: PinCipher;
  now: () => number;
}

/** What an action sees: the session before the step, the step's values so far, and the input just typed. */
export interface ActionCall {
  session: UssdSession;
  values: Record<string, string>;
  input: string;
}

export interface ActionResult {
  outcome: string;
  /** Values to save (`writes`). */
  values?: Record<string, string>;
  /** Values for this step's texts (`says`). */
  said?: Record<string, string>;
  /** Login or logout. */
  context?: Partial<UssdContext>;
}

type Maybe<T> = T | Promise<T>;

const LOGGED_OUT = { isAuthenticated: false, customerId: undefined };

export function runAction(
  name: Exclude<ActionName, RequestAction | 'query'>,
  call: ActionCall,
  deps: ActionDeps,
): Maybe<ActionResult> {
  switch (name) {
    case 'createAccount':
      return createAccount(call, deps);
    case 'findAccount':
      return findAccount(call, deps);
    case 'logIn':
      return pinCheck(call.values.loginId ?? '', call, deps, true);
    case 'verifyPin':
      return pinCheck(call.session.context.customerId ?? '', call, deps, false);
    case 'changePin':
      return deps.customers
        .changePin(call.session.context.customerId ?? '', call.input)
        .then((changed) => ({ outcome: changed ? 'changed' : 'gone' }));
    case 'logOut':
      return { outcome: 'done', context: LOGGED_OUT };
  }
}

async function createAccount({ session, values, input }: ActionCall, { customers, now }: ActionDeps) {
  if (!values.fullName || !values.pin) return { outcome: 'incomplete' };
  // Keyed by the session and the history it had consumed: the same step retried (the session's commit lost in
  // a crash after the account's) finds the account it made instead of making another.
  const creationKey = `${session.sessionId}|${session.history.length}|${session.history.digest}`;
  const customer = await customers.create(
    { fullName: values.fullName, email: values.email, phoneNumber: session.phoneNumber, pin: input },
    now(),
    creationKey,
  );
  return { outcome: 'created', values: { createdId: customer.customerId } };
}

async function findAccount({ values }: ActionCall, { customers, now }: ActionDeps): Promise<ActionResult> {
  const customerId = values.loginId ?? '';
  const customer = customerId ? await customers.get(customerId) : undefined;
  if (!customer) return { outcome: 'unknown' };
  const time = now();
  if (customer.lockedUntil !== undefined && customer.lockedUntil > time)
    return { outcome: 'locked', said: lockSaid(customer.lockedUntil, time) };
  return { outcome: 'found' };
}

async function pinCheck(customerId: string, { input }: ActionCall, deps: ActionDeps, login: boolean) {
  const time = deps.now();
  const check = await deps.customers.verifyPin(customerId, input, time);
  switch (check.result) {
    case 'ok':
      return login ? { outcome: 'ok', context: { isAuthenticated: true, customerId } } : { outcome: 'ok' };
    case 'wrong':
      return {
        outcome: check.attemptsLeft === 1 ? 'lastAttempt' : 'wrong',
        said: { attemptsLeft: String(check.attemptsLeft) },
      };
    case 'locked':
      return { outcome: check.lockedNow ? 'lockedNow' : 'locked', said: lockSaid(check.until, time) };
    case 'unknown':
      return { outcome: 'unknown' };
  }
}

/** "27" and "09:32 UTC" (with the date when not today): the lock outlives the session, so say when it ends. */
function lockSaid(until: number, now: number): Record<string, string> {
  const minutes = Math.max(1, Math.ceil((until - now) / 60_000));
  const iso = new Date(until).toISOString();
  const sameDay = iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10);
  return {
    lockMinutes: String(minutes),
    lockUntil: `${sameDay ? '' : `${iso.slice(0, 10)} `}${iso.slice(11, 16)} UTC`,
  };
}
