// Thread: any, at start-up (and the CPU pool's scrypt task)
// Where the PIN encryption key comes from.
// PIN_ENCRYPTION_KEY is either the key itself (64 hex characters) or a passphrase of at least 32 characters
// stretched with scrypt; anything else (63 hex characters lost in a paste, a short word) is refused, never used.
// Without it, development gets a random key kept in DATA_DIR and production refuses to start: a key that
// silently changes would make every stored PIN unverifiable.
import { createHmac, randomBytes, scrypt } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the key's resolution writes to: the server's logger, or a tool's console. */
export interface KeyLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Stretches `secret` into a 32-byte key; injected so the caller can run scrypt in its CPU pool. */
export type DeriveKey = (secret: string, salt: string) => Promise<Uint8Array>;

export interface PinKeyEnv {
  PIN_ENCRYPTION_KEY?: string;
  NODE_ENV?: string;
  DATA_DIR: string;
}

export const PIN_KEY_FILE = 'pin-encryption.key';

/**
 * Fixed salt for passphrase keys. The key must come out the same on every start and on every host, and
 * the passphrase is the secret; the salt only separates this use from any other use of the same passphrase.
 */
export const PIN_KEY_SALT = 'session-actor-runtime/ussd-pin-key/v1';

/** scrypt cost: about 100 ms and 32 MiB once per start. */
export const SCRYPT_OPTIONS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const ALL_HEX = /^[0-9a-fA-F]+$/;
export const MIN_PASSPHRASE_LENGTH = 32;

/** How a key was given: the key itself, a passphrase stretched with scrypt, or the development key file. */
export type PinKeyKind = 'hex' | 'passphrase' | 'development';

export interface PinKey {
  readonly key: Buffer;
  readonly kind: PinKeyKind;
}

/** What is wrong with a PIN_ENCRYPTION_KEY value (or NEW_PIN_ENCRYPTION_KEY), or undefined when it is usable. */
export function pinKeyProblem(value: string): string | undefined {
  if (HEX_KEY.test(value)) return undefined;
  if (ALL_HEX.test(value))
    return `has ${value.length} hex characters: a key is exactly 64 (openssl rand -hex 32); a passphrase is not all hex`;
  if (value.length < MIN_PASSPHRASE_LENGTH)
    return `must be 64 hex characters (openssl rand -hex 32) or a passphrase of at least ${MIN_PASSPHRASE_LENGTH} characters (this one has ${value.length})`;
  return undefined;
}

/**
 * The key check value: an HMAC of a fixed text under the key. Stored beside the records (key-checks.ts) it tells a
 * start with another key from one with the key the PINs were encrypted with, and reveals nothing of the key.
 */
export function pinKeyCheck(key: Uint8Array): string {
  return createHmac('sha256', key).update('session-actor-runtime/pin-key-check/v1').digest('hex');
}

/** A PIN_ENCRYPTION_KEY value as a key: itself when hex, else stretched; throws on a value pinKeyProblem refuses. */
export async function keyFromValue(name: string, value: string, derive: DeriveKey = scryptKey): Promise<PinKey> {
  const problem = pinKeyProblem(value);
  if (problem) throw new Error(`${name} ${problem}`);
  if (HEX_KEY.test(value)) return { key: Buffer.from(value, 'hex'), kind: 'hex' };
  const key = Buffer.from(await derive(value, PIN_KEY_SALT));
  if (key.length !== 32) throw new Error(`PIN key derivation returned ${key.length} bytes instead of 32`);
  return { key, kind: 'passphrase' };
}

/** The default DeriveKey: node:crypto scrypt on the calling thread. */
export function scryptKey(secret: string, salt: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, 32, SCRYPT_OPTIONS, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/**
 * Resolves the 32-byte AES-256 key for PINs, and says in the log which kind it is.
 *
 * @throws Error when NODE_ENV is production and PIN_ENCRYPTION_KEY is unset, when the value is neither a key nor a
 *   long passphrase, or when the key file is corrupt.
 * @example const { key } = await resolvePinKey(config, log); const cipher = new PinCipher(key);
 */
export async function resolvePinKey(env: PinKeyEnv, log: KeyLog, derive: DeriveKey = scryptKey): Promise<PinKey> {
  const configured = env.PIN_ENCRYPTION_KEY?.trim();
  if (configured) {
    const resolved = await keyFromValue('PIN_ENCRYPTION_KEY', configured, derive);
    log.info(
      { pinKey: resolved.kind },
      resolved.kind === 'hex'
        ? 'PIN key: PIN_ENCRYPTION_KEY is 64 hex characters, used as the AES-256 key'
        : `PIN key: PIN_ENCRYPTION_KEY is a passphrase, stretched with scrypt (N=${SCRYPT_OPTIONS.N}, r=${SCRYPT_OPTIONS.r})`,
    );
    return resolved;
  }
  if (env.NODE_ENV === 'production') {
    throw new Error(
      'PIN_ENCRYPTION_KEY is required in production: set it to 64 hex characters (openssl rand -hex 32) ' +
        'or to a long passphrase. Customer PINs are encrypted with it and cannot be checked without it.',
    );
  }
  return { key: developmentKey(env.DATA_DIR, log), kind: 'development' };
}

function developmentKey(dataDir: string, log: Pick<KeyLog, 'warn'>): Buffer {
  const path = join(dataDir, PIN_KEY_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    // 'wx' fails if the file exists, so two processes starting together cannot each write their own key.
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    log.warn(
      { path },
      'PIN_ENCRYPTION_KEY is not set: created a random development key; set PIN_ENCRYPTION_KEY in production',
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    log.warn(
      { path },
      'PIN_ENCRYPTION_KEY is not set: using the development key file; set PIN_ENCRYPTION_KEY in production',
    );
  }
  const hex = readFileSync(path, 'utf8').trim();
  if (!HEX_KEY.test(hex)) {
    throw new Error(`${path} does not hold a 64-hex-character key; restore it or set PIN_ENCRYPTION_KEY`);
  }
  return Buffer.from(hex, 'hex');
}
