// Thread: main (the gateway's HTTP/2 client)
// HPACK's static Huffman code (RFC 7541 Appendix B), hand-written
// because it sits on the hot path of every response header block: a nibble-at-a-time state table built once.

/**
 * The code length of each symbol 0..256 (256 is EOS), from the RFC's table. The code is canonical (codes of one
 * length are consecutive, in symbol order, shorter lengths first), so the lengths alone define every code.
 */
const CODE_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28,
  28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6,
  5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23,
  22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22,
  23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26,
  20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27,
  27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27,
  27, 27, 27, 26, 30,
];
const EOS = 256;

/** Each symbol's code, right-aligned, and its length. */
export const HUFFMAN_CODES = new Uint32Array(257);
export const HUFFMAN_LENGTHS = Uint8Array.from(CODE_LENGTHS);
{
  const order = [...HUFFMAN_CODES.keys()].sort((a, b) => CODE_LENGTHS[a] - CODE_LENGTHS[b] || a - b);
  let code = 0;
  let length = CODE_LENGTHS[order[0]];
  for (const symbol of order) {
    code <<= CODE_LENGTHS[symbol] - length;
    length = CODE_LENGTHS[symbol];
    HUFFMAN_CODES[symbol] = code >>> 0;
    code++;
  }
}

// The decoding automaton: states are the code tree's 256 inner nodes (0 = the root); for a state and the next
// 4 bits, DECODE_TABLE holds the next state, whether a symbol was completed (at most one: codes are >= 5 bits)
// and which, or that the bits walked into EOS or off the tree. ACCEPTS says whether a string may end in a state:
// only in the root or on a run of fewer than 8 one-bits (the EOS prefix used as padding).
const EMITS = 0x100;
const FAILS = 0x200;
const DECODE_TABLE = new Uint32Array(256 * 16);
const ACCEPTS = new Uint8Array(256);
{
  // The tree as child arrays: node ids >= 0 are inner nodes, ~symbol marks a leaf.
  const zero: number[] = [0];
  const one: number[] = [0];
  const fresh = () => {
    zero.push(0);
    one.push(0);
    return zero.length - 1;
  };
  for (let symbol = 0; symbol <= EOS; symbol++) {
    let node = 0;
    for (let bit = CODE_LENGTHS[symbol] - 1; bit >= 0; bit--) {
      const children = (HUFFMAN_CODES[symbol] >>> bit) & 1 ? one : zero;
      if (bit === 0) children[node] = ~symbol;
      else node = children[node] || (children[node] = fresh());
    }
  }
  for (let state = 0; state < 256; state++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let entry = 0;
      for (let bit = 3; bit >= 0; bit--) {
        const next = (nibble >>> bit) & 1 ? one[node] : zero[node];
        if (next < 0) {
          if (~next === EOS) {
            entry = FAILS;
            break;
          }
          entry = EMITS | ~next;
          node = 0;
        } else {
          node = next;
        }
      }
      DECODE_TABLE[state * 16 + nibble] = entry & FAILS ? FAILS : (node << 16) | entry;
    }
  }
  ACCEPTS[0] = 1;
  for (let node = 0, depth = 0; depth < 7; depth++) {
    node = one[node];
    ACCEPTS[node] = 1;
  }
}

/** The text of a Huffman-coded string (Latin-1, as header bytes are); throws on EOS, bad padding or a cut code. */
export function huffmanDecode(bytes: Uint8Array, start: number, end: number): string {
  let state = 0;
  let text = '';
  for (let i = start; i < end; i++) {
    const byte = bytes[i];
    let entry = DECODE_TABLE[state * 16 + (byte >>> 4)];
    if (entry & FAILS) throw new Error('HPACK: Huffman string contains EOS');
    if (entry & EMITS) text += String.fromCharCode(entry & 0xff);
    state = entry >>> 16;
    entry = DECODE_TABLE[state * 16 + (byte & 15)];
    if (entry & FAILS) throw new Error('HPACK: Huffman string contains EOS');
    if (entry & EMITS) text += String.fromCharCode(entry & 0xff);
    state = entry >>> 16;
  }
  if (!ACCEPTS[state]) throw new Error('HPACK: Huffman string has invalid padding');
  return text;
}

/** The Huffman coding of a Latin-1 string (used by tests and by encoders that want the shorter form). */
export function huffmanEncode(text: string): Buffer {
  let bits = 0;
  for (let i = 0; i < text.length; i++) bits += HUFFMAN_LENGTHS[text.charCodeAt(i) & 0xff];
  const out = Buffer.alloc((bits + 7) >>> 3);
  let accumulator = 0;
  let pending = 0;
  let offset = 0;
  for (let i = 0; i < text.length; i++) {
    const symbol = text.charCodeAt(i) & 0xff;
    const length = HUFFMAN_LENGTHS[symbol];
    // At most 30 bits of code on up to 7 pending bits: split so the accumulator never passes 32 bits.
    for (let left = length; left > 0; ) {
      const take = Math.min(left, 24);
      left -= take;
      accumulator = (accumulator << take) | ((HUFFMAN_CODES[symbol] >>> left) & ((1 << take) - 1));
      pending += take;
      while (pending >= 8) {
        pending -= 8;
        out[offset++] = (accumulator >>> pending) & 0xff;
      }
      accumulator &= (1 << pending) - 1;
    }
  }
  if (pending > 0) out[offset] = ((accumulator << (8 - pending)) | (0xff >>> pending)) & 0xff;
  return out;
}
