// Thread: CPU pool
// piscina task file: each named export is one task, run through CpuPool.run(name, payload).
import { scryptKey } from '../src/ussd/pin-key.js';
import { verifyEd25519Checks, type SignatureCheck } from '../src/oracle/auth/ed25519.js';

/** Stretches a secret into a 32-byte key (PIN_ENCRYPTION_KEY given as a passphrase). */
export function deriveKey({ secret, salt }: { secret: string; salt: string }): Promise<Uint8Array> {
  return scryptKey(secret, salt);
}

/** Checks a batch of Ed25519 signatures (UCAN verification on an auth-cache miss); one boolean per check. */
export function verifyEd25519Batch(checks: SignatureCheck[]): boolean[] {
  return verifyEd25519Checks(checks);
}
