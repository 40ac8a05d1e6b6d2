// Thread: main
// Parsing of the quantities the command line takes: durations ("300ms", "10s", "2m"), percentages ("0.1%")
// and rates ("50/s", "50"). Each throws a message naming what it expected.

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/;

/** Milliseconds; a bare number is seconds. */
export function parseDuration(text: string, what = 'duration'): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new Error(`${what} must look like 300ms, 10s or 2m, got "${text}"`);
  const value = Number(match[1]);
  const unit = match[2] ?? 's';
  return unit === 'ms' ? value : unit === 's' ? value * 1000 : value * 60_000;
}

/** A fraction: "10%" -> 0.1; a bare number is already a percentage ("10" -> 0.1). */
export function parsePercent(text: string, what = 'percentage'): number {
  const match = /^(\d+(?:\.\d+)?)\s*%?$/.exec(text.trim());
  if (!match) throw new Error(`${what} must look like 10% or 0.1%, got "${text}"`);
  return Number(match[1]) / 100;
}

/** Arrivals per second: "50/s", "50", "3000/m". */
export function parseRate(text: string, what = 'rate'): number {
  const match = /^(\d+(?:\.\d+)?)\s*(?:\/\s*(s|m))?$/.exec(text.trim());
  const rate = match ? Number(match[1]) / (match[2] === 'm' ? 60 : 1) : NaN;
  if (!(rate > 0)) throw new Error(`${what} must be a positive number per second like 50/s, got "${text}"`);
  return rate;
}

export function parsePositiveInt(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${what} must be a positive whole number, got "${text}"`);
  return n;
}
