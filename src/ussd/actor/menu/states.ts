// Actor hosts. Every state of the USSD menu, by name.
import { createAccountStates } from './create-account.js';
import { infoStates } from './info.js';
import { loginStates } from './login.js';
import { servicesStates } from './services.js';
import type { StateDef, StateName } from './types.js';

export const STATES = {
  ...infoStates,
  ...createAccountStates,
  ...loginStates,
  ...servicesStates,
} as Record<StateName, StateDef>;

export const STATE_NAMES = Object.keys(STATES) as StateName[];
