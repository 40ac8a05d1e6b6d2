// Actor hosts. The services menu of a logged-in customer: account details, change PIN, log out.
import type { UssdSession } from '../../session.js';
import { accountDetails, greeting, locked, NAV, TEXT, wrongPin } from './screens.js';
import { checkNewPin, isPinFormat, PIN_FORMAT_RULE } from './validators.js';
import { menu, type MenuDeps, type Outcome, type StateDef, type StateName } from './types.js';

const LOGGED_OUT = { isAuthenticated: false, customerId: undefined };

async function customerOf(session: UssdSession, deps: MenuDeps) {
  return session.context.customerId === undefined ? undefined : deps.customers.get(session.context.customerId);
}

export const servicesStates: Partial<Record<StateName, StateDef>> = {
  services: menu(
    async (session, deps) => `${greeting((await customerOf(session, deps))?.fullName ?? '')}\n${TEXT.servicesMenu}`,
    {
      '1': 'accountDetails',
      '2': 'changePinOld',
      '3': (): Outcome => ({ end: TEXT.loggedOut, context: LOGGED_OUT }),
    },
    { home: true, auth: true, keeps: [] },
  ),

  accountDetails: menu(
    async (session, deps) => {
      const customer = await customerOf(session, deps);
      if (!customer) return TEXT.accountGone;
      // Room kept for the navigation lines and an "Invalid choice." notice.
      return accountDetails(customer, `${TEXT.invalidChoice}\n${NAV.back}\n${NAV.home}\n`.length);
    },
    {},
    { back: 'services', home: true, auth: true },
  ),

  changePinOld: {
    body: () => TEXT.askCurrentPin,
    back: 'services',
    auth: true,
    keeps: [],
    async handle(input, session, deps) {
      if (!isPinFormat(input)) return { to: 'changePinOld', notice: PIN_FORMAT_RULE };
      const time = deps.now();
      const check = await deps.customers.verifyPin(session.context.customerId ?? '', input, time);
      switch (check.result) {
        case 'ok':
          return { to: 'changePinNew', pending: { oldPin: deps.pinCipher.encrypt(input, session.sessionId) } };
        case 'wrong':
          return { to: 'changePinOld', notice: wrongPin(check.attemptsLeft) };
        case 'locked':
          return { end: `${locked(check.until, time, check.lockedNow)} You are logged out.`, context: LOGGED_OUT };
        case 'unknown':
          return { end: TEXT.accountGone, context: LOGGED_OUT };
      }
    },
  },

  changePinNew: {
    body: () => TEXT.askChangedPin,
    back: 'changePinOld',
    auth: true,
    keeps: ['oldPin'],
    handle(input, session, { pinCipher }) {
      const pin = checkNewPin(input, session.phoneNumber);
      if (!pin.ok) return { to: 'changePinNew', notice: pin.message };
      const oldPin = session.pending?.oldPin;
      if (!oldPin) return { to: 'changePinOld' };
      if (pinCipher.matches(oldPin, pin.value, session.sessionId)) return { to: 'changePinNew', notice: TEXT.samePin };
      return { to: 'changePinConfirm', pending: { newPin: pinCipher.encrypt(pin.value, session.sessionId) } };
    },
  },

  changePinConfirm: {
    body: () => TEXT.askChangedPinAgain,
    back: 'changePinNew',
    auth: true,
    keeps: ['oldPin', 'newPin'],
    async handle(input, session, { pinCipher, customers }) {
      const newPin = session.pending?.newPin;
      if (!newPin) return { to: 'changePinNew' };
      if (!pinCipher.matches(newPin, input, session.sessionId)) return { to: 'changePinNew', notice: TEXT.pinMismatch };
      const changed = await customers.changePin(session.context.customerId ?? '', input);
      return changed ? { to: 'services', notice: TEXT.pinChanged } : { end: TEXT.accountGone, context: LOGGED_OUT };
    },
  },
};
