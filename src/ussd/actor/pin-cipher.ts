// Actor hosts. PINs at rest: AES-256-GCM with a random 12-byte nonce per encryption, so the same PIN never
// gives the same ciphertext. Stored as one string: "v1." + base64url(nonce | ciphertext | tag). An optional
// context (the customer ID, the session ID) is bound as additional data, so a ciphertext copied elsewhere
// never matches.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

const VERSION = 'v1.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class PinCipher {
  readonly #key: Buffer;
  readonly #digestKey: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error(`the PIN key must be 32 bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
    // A separate subkey, so digests and ciphertexts never share key material.
    this.#digestKey = Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), 'ussd-text-history-digest', 32));
  }

  /**
   * Keyed digest (HMAC-SHA256) of text that may contain PINs, such as a USSD input history: it can be
   * compared later without the text being stored, and cannot be brute-forced without the key.
   */
  digest(text: string): string {
    return createHmac('sha256', this.#digestKey).update(text, 'utf8').digest('base64url');
  }

  /** Encrypts `pin`; every call returns a different string. */
  encrypt(pin: string, context = ''): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(pin, 'utf8'), cipher.final()]);
    return VERSION + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /**
   * Whether `stored` holds `pin` (encrypted with the same key and context). Constant-time comparison;
   * false, never an exception, for tampered, truncated or foreign data.
   */
  matches(stored: string, pin: string, context = ''): boolean {
    const plain = this.#decrypt(stored, context);
    if (plain === undefined || typeof pin !== 'string') return false;
    // Digests have equal lengths, which timingSafeEqual requires; lengths of the PINs leak nothing then.
    return timingSafeEqual(sha256(plain), sha256(Buffer.from(pin, 'utf8')));
  }

  #decrypt(stored: string, context: string): Buffer | undefined {
    if (typeof stored !== 'string' || !stored.startsWith(VERSION)) return undefined;
    const raw = Buffer.from(stored.slice(VERSION.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
    } catch {
      return undefined;
    }
  }
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}
