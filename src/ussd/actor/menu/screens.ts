// Actor hosts. Screen texts and the helpers that lay them out. A screen is at most 182 characters including its
// `CON `/`END ` prefix (the USSD limit); test/ussd-menu.test.ts walks every state to keep it so.

export const MAX_SCREEN = 182;

export const NAV = { back: '0. Back', home: '00. Home', exit: '*. Exit' } as const;

export const TEXT = {
  welcome: 'Welcome! Choose an option:\n1. Know More\n2. Account Menu',
  knowMore: 'Know More\n1. About this service\n2. Pricing\n3. Delivery',
  about:
    'About this service\nOpen and manage your customer account from any phone: no internet, no app. ' +
    'Dial this code any time.',
  pricing: 'Pricing\nDialling this service is free. Opening an account, logging in and changing your PIN cost nothing.',
  delivery: 'Delivery\nOrders reach your nearest agent in 2 to 5 working days. Bring your customer ID to collect them.',
  accountMenu: 'Account Menu\n1. Log in\n2. Create account',
  askName: 'Enter your full name:',
  askEmail: 'Enter your email address, or 00 to skip:',
  askNewPin: 'Choose a 5-digit PIN:',
  askPinAgain: 'Enter the same PIN again to confirm:',
  askCustomerId: 'Enter your customer ID (like C1A2B3C4D):',
  askPin: 'Enter your 5-digit PIN:',
  askCurrentPin: 'Enter your current PIN:',
  askChangedPin: 'Enter your new 5-digit PIN:',
  askChangedPinAgain: 'Enter the new PIN again:',
  servicesMenu: '1. Account details\n2. Change PIN\n3. Log out',
  invalidChoice: 'Invalid choice.',
  pinMismatch: 'PINs do not match. Try again.',
  samePin: 'The new PIN must differ from the current one.',
  pinChanged: 'Your PIN has been changed.',
  loginFirst: 'Please log in first.',
  goodbye: 'Thank you for using our service. Goodbye!',
  loggedOut: 'You are logged out. Goodbye!',
  accountGone: 'This account no longer exists. Goodbye!',
} as const;

export function created(customerId: string): string {
  return `Account created!\nYour customer ID: ${customerId}\nKeep it: you need it to log in.\n1. Log in`;
}

export function goodbyeWithId(customerId: string): string {
  return `Your customer ID is ${customerId}. Keep it safe. Goodbye!`;
}

export function greeting(fullName: string): string {
  return `Hello ${shorten(fullName.split(' ')[0] ?? fullName, 24)}`;
}

export function wrongPin(attemptsLeft: number): string {
  return `Wrong PIN. ${attemptsLeft} ${attemptsLeft === 1 ? 'attempt' : 'attempts'} left.`;
}

export function unknownCustomer(customerId: string): string {
  return `No account with ID ${customerId}.`;
}

export const INVALID_CUSTOMER_ID = 'Customer IDs are C and 8 characters, like C1A2B3C4D.';

/** "Account locked. Try again in 27 min (09:32 UTC)." — the lock outlives the session, so say when it ends. */
export function locked(until: number, now: number, lockedNow: boolean): string {
  const minutes = Math.max(1, Math.ceil((until - now) / 60_000));
  const prefix = lockedNow ? 'Too many wrong PINs. Account locked.' : 'Account locked.';
  return `${prefix} Try again in ${minutes} min (${formatUtc(until, now)}).`;
}

function formatUtc(at: number, now: number): string {
  const iso = new Date(at).toISOString();
  const sameDay = iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10);
  return `${sameDay ? '' : `${iso.slice(0, 10)} `}${iso.slice(11, 16)} UTC`;
}

/**
 * Account details, shortening the free-text fields (name up to 60, email up to 64 characters) so the screen
 * fits with `reserve` more characters (navigation lines, a notice) below it.
 */
export function accountDetails(
  customer: { customerId: string; fullName: string; phoneNumber: string; email?: string },
  reserve: number,
): string {
  const email = customer.email ?? 'none';
  const fixed = `Account details\nID: ${customer.customerId}\nName: \nPhone: ${customer.phoneNumber}\nEmail: `;
  const room = MAX_SCREEN - 'CON '.length - reserve - fixed.length;
  // Each field gets what the other leaves, and at least half of the room when both are long.
  const name = shorten(customer.fullName, room - Math.min(email.length, room / 2));
  return `${fixed.replace('Name: ', `Name: ${name}`)}${shorten(email, room - name.length)}`;
}

/** Cuts `text` to `max` characters, marking the cut with "..". */
export function shorten(text: string, max: number): string {
  const limit = Math.max(3, Math.floor(max));
  return text.length <= limit ? text : `${text.slice(0, limit - 2)}..`;
}

/** Joins a notice (error or confirmation), the body and the navigation lines of a screen. */
export function compose(...parts: (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined && part !== '').join('\n');
}
