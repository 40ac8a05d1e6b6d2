// Actor hosts. Log in: customer ID, then PIN. The wrong-PIN counter and the lock live on the account
// (CustomerAccounts).
import { parseCustomerId } from '../../customers/repository.js';
import { INVALID_CUSTOMER_ID, locked, TEXT, unknownCustomer, wrongPin } from './screens.js';
import { isPinFormat, PIN_FORMAT_RULE } from './validators.js';
import type { StateDef, StateName } from './types.js';

export const loginStates: Partial<Record<StateName, StateDef>> = {
  loginId: {
    body: () => TEXT.askCustomerId,
    back: 'accountMenu',
    keeps: [],
    async handle(input, _session, { customers, now }) {
      const customerId = parseCustomerId(input);
      if (!customerId) return { to: 'loginId', notice: INVALID_CUSTOMER_ID };
      const customer = await customers.get(customerId);
      if (!customer) return { to: 'loginId', notice: unknownCustomer(customerId) };
      const time = now();
      if (customer.lockedUntil !== undefined && customer.lockedUntil > time) {
        return { to: 'accountMenu', notice: locked(customer.lockedUntil, time, false) };
      }
      return { to: 'loginPin', pending: { loginId: customerId } };
    },
  },

  loginPin: {
    body: () => TEXT.askPin,
    back: 'loginId',
    keeps: ['loginId'],
    async handle(input, session, { customers, now }) {
      const customerId = session.pending?.loginId;
      if (!customerId) return { to: 'loginId' };
      if (!isPinFormat(input)) return { to: 'loginPin', notice: PIN_FORMAT_RULE };
      const time = now();
      const check = await customers.verifyPin(customerId, input, time);
      switch (check.result) {
        case 'ok':
          return { to: 'services', context: { isAuthenticated: true, customerId } };
        case 'wrong':
          return { to: 'loginPin', notice: wrongPin(check.attemptsLeft) };
        case 'locked':
          return { to: 'accountMenu', notice: locked(check.until, time, check.lockedNow) };
        case 'unknown':
          return { to: 'loginId', notice: unknownCustomer(customerId) };
      }
    },
  },
};
