// Main thread, at start-up (and the CPU pool's scrypt task). Where the PIN encryption key comes from.
// PIN_ENCRYPTION_KEY is either the key itself (64 hex characters) or a passphrase stretched with scrypt.
// Without it, development gets a random key kept in DATA_DIR and production refuses to start: a key that
// silently changes would make every stored PIN unverifiable.
import { randomBytes, scrypt } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';

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

/** The default DeriveKey: node:crypto scrypt on the calling thread. */
export function scryptKey(secret: string, salt: string): Promise<Uint8Array> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, 32, SCRYPT_OPTIONS, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/**
 * Resolves the 32-byte AES-256 key for PINs.
 *
 * @throws Error when NODE_ENV is production and PIN_ENCRYPTION_KEY is unset, or when the key file is corrupt.
 * @example const key = await resolvePinKey(config, log); const cipher = new PinCipher(key);
 */
export async function resolvePinKey(
  env: PinKeyEnv,
  log: Pick<Logger, 'warn'>,
  derive: DeriveKey = scryptKey,
): Promise<Buffer> {
  const configured = env.PIN_ENCRYPTION_KEY?.trim();
  if (configured) {
    if (HEX_KEY.test(configured)) return Buffer.from(configured, 'hex');
    const key = Buffer.from(await derive(configured, PIN_KEY_SALT));
    if (key.length !== 32) throw new Error(`PIN key derivation returned ${key.length} bytes instead of 32`);
    return key;
  }
  if (env.NODE_ENV === 'production') {
    throw new Error(
      'PIN_ENCRYPTION_KEY is required in production: set it to 64 hex characters (openssl rand -hex 32) ' +
        'or to a long passphrase. Customer PINs are encrypted with it and cannot be checked without it.',
    );
  }
  return developmentKey(env.DATA_DIR, log);
}

function developmentKey(dataDir: string, log: Pick<Logger, 'warn'>): Buffer {
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
