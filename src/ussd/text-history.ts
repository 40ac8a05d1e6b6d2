// Telecom gateways send the whole input history joined by `*` on every request ("", "1", "1*2", "1*2*12345").
// The new input is what follows the part of the history the session has already consumed.

export type NewInput = { kind: 'retry' } | { kind: 'input'; input: string };

/**
 * Returns the input the user just typed, given the history the session already consumed and the `text` of
 * the request.
 *
 * - `text === consumed`: the gateway retried the same request; answer the last screen again.
 * - `consumed === ''`: everything in `text` is new (the first input after the welcome menu).
 * - `text` extends `consumed + '*'`: the rest is the input. It may be `*` (Exit) or contain `*`, because the
 *   user may type `*` as part of an answer; only the screen decides what it means.
 * - anything else: the gateway sends only the latest input (some aggregators do), so `text` is the input.
 *
 * After applying the input the caller stores `text` as the new consumed history.
 *
 * @example newInput('1', '1*2') // { kind: 'input', input: '2' }
 */
export function newInput(consumed: string, text: string): NewInput {
  if (text === consumed) return { kind: 'retry' };
  if (consumed === '') return { kind: 'input', input: text };
  const prefix = `${consumed}*`;
  if (text.startsWith(prefix)) return { kind: 'input', input: text.slice(prefix.length) };
  return { kind: 'input', input: text };
}
