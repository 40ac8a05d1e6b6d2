// Actor hosts. Account Menu and the create-account form: full name, optional email, PIN, PIN confirmation,
// new customer ID.
import { created, goodbyeWithId, TEXT } from './screens.js';
import { checkEmail, checkName, checkNewPin } from './validators.js';
import { menu, type StateDef, type StateName } from './types.js';

export const createAccountStates: Partial<Record<StateName, StateDef>> = {
  accountMenu: menu(TEXT.accountMenu, { '1': 'loginId', '2': 'createName' }, { back: 'preMenu' }),

  createName: {
    body: () => TEXT.askName,
    back: 'accountMenu',
    keeps: [],
    handle(input) {
      const name = checkName(input);
      return name.ok
        ? { to: 'createEmail', pending: { fullName: name.value } }
        : { to: 'createName', notice: name.message };
    },
  },

  createEmail: {
    body: () => TEXT.askEmail,
    back: 'createName',
    keeps: ['fullName'],
    handle(input) {
      if (input === '00') return { to: 'createPin', pending: { email: undefined } };
      const email = checkEmail(input);
      return email.ok
        ? { to: 'createPin', pending: { email: email.value } }
        : { to: 'createEmail', notice: email.message };
    },
  },

  createPin: {
    body: () => TEXT.askNewPin,
    back: 'createEmail',
    keeps: ['fullName', 'email'],
    handle(input, session, { pinCipher }) {
      const pin = checkNewPin(input, session.phoneNumber);
      if (!pin.ok) return { to: 'createPin', notice: pin.message };
      return { to: 'createPinConfirm', pending: { pin: pinCipher.encrypt(pin.value, session.sessionId) } };
    },
  },

  createPinConfirm: {
    body: () => TEXT.askPinAgain,
    back: 'createPin',
    keeps: ['fullName', 'email', 'pin'],
    async handle(input, session, { pinCipher, customers, now }) {
      const draft = session.pending ?? {};
      if (!draft.fullName || !draft.pin) return { to: 'createName' };
      if (!pinCipher.matches(draft.pin, input, session.sessionId)) return { to: 'createPin', notice: TEXT.pinMismatch };
      // Keyed by the session and the history it had consumed: the same step retried (the session's commit
      // lost in a crash after the account's) finds the account it made instead of making another.
      const creationKey = `${session.sessionId}|${session.history.length}|${session.history.digest}`;
      const customer = await customers.create(
        { fullName: draft.fullName, email: draft.email, phoneNumber: session.phoneNumber, pin: input },
        now(),
        creationKey,
      );
      return { to: 'createDone', pending: { createdId: customer.customerId } };
    },
  },

  // CON, not END: the ID stays on screen until the user moves on, and "Log in" needs no retyping of it.
  createDone: menu(
    (session) => created(session.pending?.createdId ?? ''),
    { '1': (session) => ({ to: 'loginPin', pending: { loginId: session.pending?.createdId } }) },
    { home: true, exit: (session) => goodbyeWithId(session.pending?.createdId ?? ''), keeps: ['createdId'] },
  ),
};
