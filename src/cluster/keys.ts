// Thread: any (pure)
// Record keys as NATS KV keys. A key is a path of parts (['customer', '+254700000001']); each part
// becomes one subject token, with every byte outside [A-Za-z0-9_-] written as =HH, so any id (a phone number with
// '+', a DID with ':', a part holding '.') is a valid key and a path prefix is a subject wildcard (`customer.>`).

export type RecordKey = readonly string[];

const PLAIN = /^[A-Za-z0-9_-]*$/;
/** One code point outside [A-Za-z0-9_-] (a lone surrogate counts as one, written as U+FFFD's bytes). */
const ESCAPED = /[^A-Za-z0-9_-]/gu;

function escapeChar(char: string): string {
  let out = '';
  for (const byte of Buffer.from(char, 'utf8')) out += `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

// Most parts (ids, numbers) need no escape: they are returned as they are, which every KV call does per key.
function encodePart(part: string): string {
  if (part === '') throw new RangeError('a record key part must not be empty');
  return PLAIN.test(part) ? part : part.replace(ESCAPED, escapeChar);
}

/** An encoded token holds only [A-Za-z0-9_-] and =HH, so turning =HH into %HH makes it a URI component. */
function decodePart(token: string): string {
  return token.includes('=') ? decodeURIComponent(token.replace(/=([0-9A-F]{2})/g, '%$1')) : token;
}

export function encodeKey(key: RecordKey): string {
  if (key.length === 0) throw new RangeError('a record key needs at least one part');
  return key.map(encodePart).join('.');
}

export function decodeKey(subjectKey: string): string[] {
  return subjectKey.split('.').map(decodePart);
}

/** The KV filter for every key under `prefix` (all keys when it is empty). */
export function prefixFilter(prefix: RecordKey): string {
  return prefix.length === 0 ? '>' : `${encodeKey(prefix)}.>`;
}
