// Actor hosts. The shapes shared by the menu states and the machine that runs them.
import type { CustomerAccounts } from '../customer-accounts.js';
import type { PinCipher } from '../pin-cipher.js';
import type { PendingDraft, UssdContext, UssdSession } from '../../session.js';
import { TEXT } from './screens.js';

export interface MenuDeps {
  customers: CustomerAccounts;
  pinCipher: PinCipher;
  /** Clock in epoch ms; injected so tests can move time (lock expiry). */
  now: () => number;
  /** Inactivity after which the session expires (USSD_SESSION_TTL_SECONDS). */
  sessionTtlSeconds: number;
}

export type StateName =
  | 'preMenu'
  | 'knowMore'
  | 'about'
  | 'pricing'
  | 'delivery'
  | 'accountMenu'
  | 'createName'
  | 'createEmail'
  | 'createPin'
  | 'createPinConfirm'
  | 'createDone'
  | 'loginId'
  | 'loginPin'
  | 'services'
  | 'accountDetails'
  | 'changePinOld'
  | 'changePinNew'
  | 'changePinConfirm';

/** What an input leads to: another screen (with an optional notice line above it) or the end of the session. */
export type Outcome =
  | { to: StateName; notice?: string; pending?: PendingDraft; context?: Partial<UssdContext> }
  | { end: string; context?: Partial<UssdContext> };

export interface StateDef {
  /** The screen body (without notice and navigation lines). */
  body(session: UssdSession, deps: MenuDeps): string | Promise<string>;
  /** Handles an input that is not a navigation key offered by this state. */
  handle(input: string, session: UssdSession, deps: MenuDeps): Outcome | Promise<Outcome>;
  /** Where `0` leads; no `0. Back` when absent. */
  back?: StateName;
  /** `00` leads to the welcome menu. */
  home?: boolean;
  /** `*` ends the session with this goodbye. */
  exit?: (session: UssdSession) => string;
  /** Only for a logged-in customer. */
  auth?: boolean;
  /** The draft fields this state works with; every other pending field is dropped on entering it. */
  keeps?: readonly (keyof PendingDraft)[];
}

/** A numbered menu: each choice leads to a state or to an outcome computed from the session. */
export function menu(
  body: string | ((session: UssdSession, deps: MenuDeps) => string | Promise<string>),
  choices: Record<string, StateName | ((session: UssdSession) => Outcome)>,
  nav: Omit<StateDef, 'body' | 'handle'> = {},
): StateDef {
  return {
    ...nav,
    body: typeof body === 'string' ? () => body : body,
    handle(input, session) {
      const choice = Object.hasOwn(choices, input) ? choices[input] : undefined;
      if (choice === undefined) return { to: session.state as StateName, notice: TEXT.invalidChoice };
      return typeof choice === 'function' ? choice(session) : { to: choice };
    },
  };
}
