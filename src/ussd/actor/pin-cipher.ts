// Thread: any
// PINs at rest: AES-256-GCM with a random 12-byte nonce per encryption, so the same PIN never
// gives the same ciphertext. Stored as one string: "v1." + base64url(nonce | ciphertext | tag). An optional
// context (the customer ID, the session ID) is bound as additional data, so a ciphertext copied elsewhere
// never matches.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

const VERSION = 'v1.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Marks a keyed digest of the current form; earlier digests (HMAC-SHA256, base64url) have no '.'. */
const DIGEST_VERSION = 'h2.';

export class PinCipher {
  readonly #key: Buffer;
  /** The secret that prefixes every digested text: 32 bytes of subkey as 64 hex characters. */
  readonly #digestPrefix: string;
  /** The HMAC key of digests written before DIGEST_VERSION (sessions live at an upgrade still hold them). */
  readonly #legacyDigestKey: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error(`the PIN key must be 32 bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
    // Separate subkeys, so digests and ciphertexts never share key material.
    this.#digestPrefix = Buffer.from(
      hkdfSync('sha256', this.#key, Buffer.alloc(0), 'ussd-text-history-digest/sha512-256', 32),
    ).toString('hex');
    this.#legacyDigestKey = Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), 'ussd-text-history-digest', 32));
  }

  /**
   * Keyed digest of text that may contain PINs, such as a USSD input history: it can be compared later
   * without the text being stored, and cannot be brute-forced without the key.
   *
   * SHA-512/256 of secret || text, in one `crypto.hash` call: a `createHmac` object per digest cost ~2 µs
   * on the actor host (two per USSD step), the one-shot call ~0.6 µs. A secret prefix is a MAC only when the
   * hash has no length extension (with plain SHA-256, whoever reads a digest could compute the digest of
   * text || padding || more without the key). SHA-512/256 outputs half of SHA-512's final state (with its
   * own initial values), so the state a continuation would start from is not in the digest (the truncated
   * "chop-MD" construction); the 256-bit secret keeps offline guessing of the PINs in the text out of reach.
   */
  digest(text: string): string {
    return DIGEST_VERSION + hash('sha512-256', this.#digestPrefix + text, 'base64url');
  }

  /** Whether `stored` is the digest of `text`, of the current form or of the HMAC form written before it. */
  isDigestOf(stored: string, text: string): boolean {
    if (stored.startsWith(DIGEST_VERSION)) return stored === this.digest(text);
    return stored === createHmac('sha256', this.#legacyDigestKey).update(text, 'utf8').digest('base64url');
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

  /** Whether this key encrypted `stored` for `context` (its authentication tag checks out). */
  opens(stored: string, context = ''): boolean {
    return this.#decrypt(stored, context) !== undefined;
  }

  /** `stored` encrypted again under `next` (a key rotation); undefined when this key did not encrypt it. */
  reencrypt(stored: string, context: string, next: PinCipher): string | undefined {
    const plain = this.#decrypt(stored, context);
    return plain === undefined ? undefined : next.encrypt(plain.toString('utf8'), context);
  }

  #decrypt(stored: string, context: string): Buffer | undefined {
    if (typeof stored !== 'string' || !stored.startsWith(VERSION)) return undefined;
    const raw = Buffer.from(stored.slice(VERSION.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, NONCE_BYTES), {
        authTagLength: TAG_BYTES,
      });
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
