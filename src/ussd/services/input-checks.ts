// Thread: any
// The checks of an `input` state, compiled once at load (the pattern becomes a RegExp then). Each
// gives the cleaned value or the reason it is refused (a definition maps reasons to notices).
import * as v from 'valibot';
import { parseCustomerId } from '../customers/repository.js';
import type { Refusal, Validation } from './definition.js';

export type Checked = { ok: true; value: string } | { ok: false; reason: Refusal };

/** What a check may compare the input with: a PIN saved earlier in the session (encrypted) and the phone. */
export interface CheckScope {
  phoneNumber: string;
  /** Whether the saved (encrypted) value `name` holds this PIN. */
  holdsPin(name: string, pin: string): boolean;
}

export type InputCheck = (input: string, scope: CheckScope) => Checked;

const emailSchema = v.pipe(v.string(), v.email());
const E164 = /^\+[1-9]\d{6,14}$/;

const refuse = (reason: Refusal): Checked => ({ ok: false, reason });
const accept = (value: string): Checked => ({ ok: true, value });

/** Compiles a validation (a bad pattern throws: the rules reject it at load first). */
export function compileCheck(validation: Validation | undefined): InputCheck {
  if (!validation) return (input) => accept(input);
  const { minLength = 0, maxLength = 182 } = validation;
  const lengthOk = (text: string) => text.length >= minLength && text.length <= maxLength;
  switch (validation.kind) {
    case 'text': {
      const pattern = validation.pattern === undefined ? undefined : new RegExp(validation.pattern, 'u');
      return (input) => {
        const text = input.replace(/\s+/g, ' ');
        return lengthOk(text) && (!pattern || pattern.test(text)) ? accept(text) : refuse('invalid');
      };
    }
    case 'email':
      return (input) => (lengthOk(input) && v.is(emailSchema, input) ? accept(input) : refuse('invalid'));
    case 'number': {
      const { min = -Infinity, max = Infinity } = validation;
      return (input) => {
        if (!/^-?\d{1,15}$/.test(input)) return refuse('format');
        const value = Number(input);
        return value >= min && value <= max ? accept(String(value)) : refuse('range');
      };
    }
    case 'phone':
      return (input) => (E164.test(input) ? accept(input) : refuse('format'));
    case 'date':
      return (input) => (isDate(input) ? accept(input) : refuse('format'));
    case 'customerId':
      return (input) => {
        const id = parseCustomerId(input);
        return id ? accept(id) : refuse('invalid');
      };
    case 'pin':
      return pinCheck(validation);
  }
}

function pinCheck({ digits = 5, policy = 'any', differentFrom, sameAs }: Validation): InputCheck {
  const format = new RegExp(`^\\d{${digits}}$`);
  return (input, scope) => {
    if (sameAs !== undefined) return scope.holdsPin(sameAs, input) ? accept(input) : refuse('mismatch');
    if (!format.test(input)) return refuse('format');
    if (policy === 'strong') {
      if (isWeakPin(input)) return refuse('weak');
      if (scope.phoneNumber.endsWith(input)) return refuse('phone');
    }
    if (differentFrom !== undefined && scope.holdsPin(differentFrom, input)) return refuse('same');
    return accept(input);
  };
}

/** One digit repeated (11111) or a run up or down by one (12345, 54321, 01234, 43210). */
export function isWeakPin(pin: string): boolean {
  const digits = [...pin].map(Number);
  const steps = new Set(digits.slice(1).map((d, i) => d - (digits[i] ?? 0)));
  return steps.size === 1 && [0, 1, -1].includes([...steps][0] ?? 2);
}

/** DDMMYYYY, a day that exists. */
function isDate(input: string): boolean {
  const match = /^(\d{2})(\d{2})(\d{4})$/.exec(input);
  if (!match) return false;
  const [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
