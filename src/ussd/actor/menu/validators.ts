// Actor hosts. Checks of what users type in the account forms. Each returns the cleaned value or the
// message to show.
import * as v from 'valibot';

export type Checked = { ok: true; value: string } | { ok: false; message: string };

const nameSchema = v.pipe(
  v.string(),
  v.transform((s) => s.trim().replace(/\s+/g, ' ')),
  v.minLength(2),
  v.maxLength(60),
  v.regex(/^\p{L}[\p{L}\p{M} '-]*$/u),
);

const emailSchema = v.pipe(v.string(), v.trim(), v.maxLength(64), v.email());

export const NAME_RULE = "Name: 2-60 letters; spaces, ' and - allowed.";
export const EMAIL_RULE = 'That email address is not valid.';
export const PIN_FORMAT_RULE = 'PIN must be exactly 5 digits.';
export const WEAK_PIN_RULE = 'PIN too easy to guess. Avoid repeated or sequential digits like 11111 or 12345.';
export const PHONE_PIN_RULE = 'PIN must not be the end of your phone number.';

export function checkName(input: string): Checked {
  const result = v.safeParse(nameSchema, input);
  return result.success ? { ok: true, value: result.output } : { ok: false, message: NAME_RULE };
}

export function checkEmail(input: string): Checked {
  const result = v.safeParse(emailSchema, input);
  return result.success ? { ok: true, value: result.output } : { ok: false, message: EMAIL_RULE };
}

export function isPinFormat(input: string): boolean {
  return /^\d{5}$/.test(input);
}

/** A PIN for a new account or a PIN change: 5 digits, not guessable from patterns or the phone number. */
export function checkNewPin(input: string, phoneNumber: string): Checked {
  const pin = input.trim();
  if (!isPinFormat(pin)) return { ok: false, message: PIN_FORMAT_RULE };
  if (isWeakPin(pin)) return { ok: false, message: WEAK_PIN_RULE };
  if (phoneNumber.endsWith(pin)) return { ok: false, message: PHONE_PIN_RULE };
  return { ok: true, value: pin };
}

/** One digit repeated (11111) or a run up or down by one (12345, 54321, 01234, 43210). */
export function isWeakPin(pin: string): boolean {
  const digits = [...pin].map(Number);
  const steps = new Set(digits.slice(1).map((d, i) => d - digits[i]));
  return steps.size === 1 && [0, 1, -1].includes([...steps][0]);
}
