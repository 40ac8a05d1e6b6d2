// Actor hosts. The USSD menu state machine: pure logic over the session record, the customer accounts and
// the PIN cipher.
export { answer, applyInput, ENDED_STATE, welcome, type MenuStep } from './machine.js';
export { STATE_NAMES } from './states.js';
export { MAX_SCREEN } from './screens.js';
export type { MenuDeps, StateName } from './types.js';
