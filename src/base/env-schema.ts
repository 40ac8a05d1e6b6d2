// Thread: any
// Building blocks for environment-variable schemas. Every face declares its variables with these,
// and src/app/config.ts validates them all in one place.
import * as v from 'valibot';

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** An integer variable with bounds and a default. */
export function integer(defaultValue: number, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^-?\d+$/, 'must be a whole number'),
      v.transform(Number),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    String(defaultValue),
  );
}

/** A boolean variable: true/false, 1/0, yes/no, on/off. */
export function boolean(defaultValue: boolean) {
  return v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.toLowerCase(),
      v.check((s) => TRUE.has(s) || FALSE.has(s), 'must be true or false'),
      v.transform((s) => TRUE.has(s)),
    ),
    String(defaultValue),
  );
}

const trimmed = v.pipe(v.string(), v.trim());

/** A string variable with a default (empty values count as unset). */
export function text(defaultValue: string): v.OptionalSchema<typeof trimmed, string>;
/** An optional string variable (empty values count as unset). */
export function text(): v.OptionalSchema<typeof trimmed, undefined>;
export function text(defaultValue?: string) {
  return v.optional(trimmed, defaultValue);
}

/** One of a fixed set of values. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T, defaultValue: T[number]) {
  return v.optional(
    v.pipe(v.string(), v.trim(), v.picklist(values, `must be one of ${values.join(', ')}`)),
    defaultValue,
  );
}

/** A comma-separated list of non-empty strings. */
export function list(defaultValue = '') {
  return v.optional(
    v.pipe(
      v.string(),
      v.transform((s) =>
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    ),
    defaultValue,
  );
}
