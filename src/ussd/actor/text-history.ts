// Thread: actor host (the USSD menu)
// Telecom gateways send the whole input history joined by `*` on every request
// ("", "1", "1*2", "1*2*12345"). The new input is what follows the part the session has already consumed.
//
// The history holds PINs in plain text, so a session does not store it: it keeps the consumed history's length
// and a keyed digest (ConsumedHistory), which is enough to recognise it as the prefix of the next `text`.
import type { ConsumedHistory } from '../session.js';

export type NewInput = { kind: 'retry' } | { kind: 'input'; input: string };

export type { ConsumedHistory };

/** Keyed digests of histories (PinCipher): the history's text is never stored. */
export interface HistoryDigests {
  digest(text: string): string;
  /** Also true for a digest of an earlier form, so sessions stored before an upgrade continue. */
  isDigestOf(stored: string, text: string): boolean;
}

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
  return split(consumed.length, (prefix) => prefix === consumed, text);
}

/** newInput for a history kept as length and digest; `digests` must hold the key that made `history`. */
export function newInputAfter(history: ConsumedHistory, text: string, digests: HistoryDigests): NewInput {
  return split(history.length, (prefix) => digests.isDigestOf(history.digest, prefix), text);
}

/** What a session stores of `text` once it has applied it. */
export function rememberHistory(text: string, digests: HistoryDigests): ConsumedHistory {
  return { length: text.length, digest: digests.digest(text) };
}

/**
 * For a gateway that sends only the latest input (an aggregator adapter): the input, or a retry when the gateway
 * numbers its requests and this number is the one the session applied last.
 */
export function latestInput(history: ConsumedHistory, input: string, step: number | undefined): NewInput {
  return step !== undefined && history.step === step ? { kind: 'retry' } : { kind: 'input', input };
}

/**
 * What a session stores once it applied the latest `input` of such a gateway: the length the whole history would
 * have (the inputs joined by `*`), and a digest chained from the one before (the inputs themselves, PINs among
 * them, are never stored), so each step's history differs from the last.
 */
export function extendHistory(
  history: ConsumedHistory,
  input: string,
  step: number | undefined,
  digests: HistoryDigests,
): ConsumedHistory {
  const length = history.length === 0 ? input.length : history.length + 1 + input.length;
  const digest = digests.digest(`${history.digest}*${input}`);
  return step === undefined ? { length, digest } : { length, digest, step };
}

function split(length: number, isConsumed: (prefix: string) => boolean, text: string): NewInput {
  if (text.length === length && isConsumed(text)) return { kind: 'retry' };
  if (length === 0) return { kind: 'input', input: text };
  if (text.length > length && text[length] === '*' && isConsumed(text.slice(0, length))) {
    return { kind: 'input', input: text.slice(length + 1) };
  }
  return { kind: 'input', input: text };
}
