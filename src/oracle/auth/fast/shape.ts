// Thread: main, hand-written for the hot path (cold UCAN verification)
// The signal that an artifact is outside the
// fast path's shape. Never a refusal: the caller hands such an artifact to ucanto's path, which decides.
export class OutOfShape extends Error {
  constructor(readonly why: string) {
    super(why);
    this.name = 'OutOfShape';
  }
}

export function outOfShape(why: string): never {
  throw new OutOfShape(why);
}

/** True when `bytes[at..]` starts with `expected`. */
export function startsWith(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (at + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

export const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
