// Thread: main
// cosmossdk.io/math LegacyDec arithmetic on the scaled integer (value × 10^18) the chain stores, as a
// bigint: what the bonding-curve formulas need (mul/quo with the chain's half-to-even rounding, ceil,
// truncation, powers). Hand-written because no maintained npm package rounds exactly like LegacyDec.
export type Dec = bigint;

export const PRECISION = 10n ** 18n;
export const ZERO: Dec = 0n;
export const ONE: Dec = PRECISION;

export const decOfInt = (n: bigint | number | string): Dec => BigInt(n) * PRECISION;
/** The wire form of a stored LegacyDec ("500000000000000000" for 0.5). */
export const decOfWire = (scaled: string | undefined): Dec => BigInt(scaled || '0');
export const wireOf = (d: Dec): string => d.toString();

/** Divides by 10^18 rounding half to even, as LegacyDec's chopPrecisionAndRound. */
function chopRound(x: bigint): bigint {
  const negative = x < 0n;
  const abs = negative ? -x : x;
  let quotient = abs / PRECISION;
  const remainder = abs % PRECISION;
  const half = PRECISION / 2n;
  if (remainder > half || (remainder === half && quotient % 2n === 1n)) quotient += 1n;
  return negative ? -quotient : quotient;
}

export const mul = (a: Dec, b: Dec): Dec => chopRound(a * b);
export const quo = (a: Dec, b: Dec): Dec => {
  if (b === 0n) throw new RangeError('division by zero');
  return chopRound((a * PRECISION * PRECISION) / b);
};
/** LegacyDec.QuoInt / QuoInt64: integer division of the scaled value, truncating. */
export const quoInt = (a: Dec, n: bigint): Dec => a / n;

/** The integer part, toward zero (LegacyDec.TruncateInt). */
export const truncateInt = (d: Dec): bigint => d / PRECISION;
/** The smallest integer not below d (LegacyDec.Ceil().TruncateInt()). */
export const ceilInt = (d: Dec): bigint => {
  const whole = d / PRECISION;
  return d > 0n && d % PRECISION !== 0n ? whole + 1n : whole;
};

/**
 * d^power for d >= 0 (the chain's ApproxPower). Whole exponents are exact (repeated mul); fractional ones
 * (square roots of the sigmoid, kappa-th roots of the augmented curve) are approximated in doubles, as the
 * chain's own fixed-point series is an approximation too: they agree to ~15 significant digits.
 */
export function power(d: Dec, exponent: Dec): Dec {
  if (d < 0n || exponent < 0n) throw new RangeError('power of a negative');
  if (exponent % PRECISION === 0n) {
    let result = ONE;
    for (let i = 0n; i < exponent / PRECISION; i++) result = mul(result, d);
    return result;
  }
  const value = (Number(d) / 1e18) ** (Number(exponent) / 1e18);
  if (!Number.isFinite(value)) throw new RangeError('numeric overflow');
  return decOfFloat(value);
}

/** A double as a Dec, keeping its ~17 significant digits. */
function decOfFloat(value: number): Dec {
  const [mantissa, exp] = value.toExponential(16).split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  const digits = BigInt(whole + fraction);
  const shift = Number(exp) - fraction.length + 18;
  return shift >= 0 ? digits * 10n ** BigInt(shift) : digits / 10n ** BigInt(-shift);
}
