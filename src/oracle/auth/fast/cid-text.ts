// Thread: main, hand-written for the hot path (cold UCAN verification)
// A binary CIDv1 in its string form,
// multibase base32 ('b', RFC 4648 lower case, no padding), as multiformats' CID.toString() writes it.
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export function cidText(cid: Uint8Array): string {
  let text = 'b';
  let bits = 0;
  let buffer = 0;
  for (const byte of cid) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      text += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) text += ALPHABET[(buffer << (5 - bits)) & 31];
  return text;
}
