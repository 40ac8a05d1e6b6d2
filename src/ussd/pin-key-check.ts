// Thread: main, at start-up (and npm run rotate-pin-key)
// The PIN key must be the one the stored PINs were encrypted
// with. Its check value (pin-key.ts) is recorded beside the records at the first start; a later start with another
// key refuses (exit 78) instead of failing every login in silence. A store written before check values were kept is
// tested against one stored PIN (AES-GCM tells whether a key opens it) before its check value is recorded.
import { StartupRefusal } from '../base/errors.js';
import type { KeyChecks } from '../store/key-checks.js';
import { PinCipher } from './actor/pin-cipher.js';
import type { CustomerRepository } from './customers/repository.js';
import { pinKeyCheck, type PinKey, type PinKeyKind } from './pin-key.js';

export const PIN_CHECK = 'pin';
export const PIN_ROTATION = 'pin-rotation';

export interface PinCheckRecord {
  check: string;
  kind: PinKeyKind;
  at: string;
}

/** A rotation under way (pin-rotation.ts): from one key's check value to another's, and how far it got. */
export interface PinRotationRecord {
  from: string;
  to: string;
  startedAt: string;
  /** The cursor of the last page of customers rewritten (CustomerRepository.page); the next run goes on after it. */
  after?: string;
  rewritten: number;
  /** Cluster mode: every pending creation binding's PIN is under the new key (pin-rotation-pending.ts). */
  pendingDone?: boolean;
}

/** One stored PIN (any customer's), or undefined when there is none. */
export type PinSample = () => Promise<{ pin: string; customerId: string } | undefined>;

/** The first customer's PIN, the sample `checkPinKey` tests a key against. */
export async function samplePin(customers: CustomerRepository): ReturnType<PinSample> {
  const [first] = (await customers.page(undefined, 1)).records;
  return first && { pin: first.value.pin, customerId: first.value.customerId };
}

/** `where` names the records in messages: DATA_DIR, or the cluster's JetStream. */
export async function checkPinKey(
  checks: KeyChecks,
  pinKey: PinKey,
  sample: PinSample,
  where: string,
): Promise<'recorded' | 'matched'> {
  const rotation = await checks.get<PinRotationRecord>(PIN_ROTATION);
  if (rotation) {
    throw new StartupRefusal(
      'PIN_ENCRYPTION_KEY',
      `PIN_ENCRYPTION_KEY: a PIN key rotation of ${where} is unfinished (started ${rotation.startedAt}, ` +
        `${rotation.rewritten} PINs rewritten): run npm run rotate-pin-key again with the same ` +
        'PIN_ENCRYPTION_KEY and NEW_PIN_ENCRYPTION_KEY; the server starts once it is done (docs/operations.md)',
    );
  }
  const check = pinKeyCheck(pinKey.key);
  let recorded = await checks.get<PinCheckRecord>(PIN_CHECK);
  let outcome: 'recorded' | 'matched' = 'matched';
  if (!recorded) {
    const stored = await sample();
    if (stored && !new PinCipher(pinKey.key).opens(stored.pin, stored.customerId))
      throw mismatch(pinKey, where, `customer ${stored.customerId}'s PIN does not open with it`);
    recorded = await checks.putIfAbsent<PinCheckRecord>(PIN_CHECK, {
      check,
      kind: pinKey.kind,
      at: new Date().toISOString(),
    });
    outcome = 'recorded';
  }
  if (recorded.check !== check)
    throw mismatch(
      pinKey,
      where,
      `its check value ${check.slice(0, 12)}… is not ${recorded.check.slice(0, 12)}…, recorded ${recorded.at} ` +
        (recorded.kind === 'development' ? 'from the development key file' : `from a ${recorded.kind} key`),
    );
  return outcome;
}

function mismatch(pinKey: PinKey, where: string, detail: string): StartupRefusal {
  const given =
    pinKey.kind === 'development'
      ? 'the development key in DATA_DIR/pin-encryption.key (PIN_ENCRYPTION_KEY is unset)'
      : 'PIN_ENCRYPTION_KEY';
  return new StartupRefusal(
    'PIN_ENCRYPTION_KEY',
    `PIN_ENCRYPTION_KEY: ${given} is not the key the PINs in ${where} were encrypted with (${detail}): set the key ` +
      'they were written with; to change keys use npm run rotate-pin-key (docs/operations.md)',
  );
}
