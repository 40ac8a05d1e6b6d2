// Thread: main
// LMDB refuses keys over 1978 bytes (lmdb-js throws on write, and on read past ~4 KB): every key built from
// client input is checked here before it reaches the store, so an oversized id is a clean 400/404.

export const MAX_KEY_BYTES = 1978;

/** Whether `key` (UTF-8) fits an LMDB key. */
export function fitsKey(key: string): boolean {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short keys skip the count.
  return key.length * 3 <= MAX_KEY_BYTES || Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES;
}
