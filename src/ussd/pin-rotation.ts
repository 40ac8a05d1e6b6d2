// Thread: main
// npm run rotate-pin-key (src/tools/keys.ts), with the server (in cluster mode every node) stopped: every stored PIN
// (and each account's identity key with it, account-secrets.ts) encrypted again under a new key, in DATA_DIR's LMDB or in cluster mode in JetStream. Resumable and safe under
// kill -9 at any point, because nothing depends on how far a killed run got:
// - the rotation is recorded (both keys' check values) before the first PIN is rewritten, and while it is, no
//   server starts (pin-key-check.ts) and no other pair of keys may rotate;
// - each PIN is tested against the new key first (AES-GCM says which key sealed it), so a PIN rewritten by a
//   killed run is left as it is and one not yet rewritten is; a record is rewritten revision-checked, and one that
//   moved meanwhile is read again and tested again, so no other write to it is lost;
// - cluster mode: PINs in pending account creations first (pin-rotation-pending.ts), then the accounts;
// - a page's progress is recorded once its rewrites are durable, so a resumed run goes on after the last page done;
// - the new key's check value replaces the old one last, then the rotation record goes (a run killed between the
//   two finds every PIN done and ends the same way).
// USSD sessions open at the time keep drafts and history digests under the old key: they are short-lived (the TTL),
// and a digest that no longer matches only makes the next input count as new (docs/operations.md).
import type { KeyChecks } from '../store/key-checks.js';
import { retryOnConflict, type Versioned } from '../store/revision.js';
import { secretsUnder } from './account-secrets.js';
import { PinCipher } from './actor/pin-cipher.js';
import type { CustomerRecord, CustomerRepository } from './customers/repository.js';
import { rotatePendingCreations, type PendingCreations } from './pin-rotation-pending.js';
import {
  PIN_CHECK,
  PIN_ROTATION,
  checkPinKey,
  samplePin,
  type PinCheckRecord,
  type PinRotationRecord,
} from './pin-key-check.js';
import { pinKeyCheck, type PinKey } from './pin-key.js';

export interface RotationProgress {
  /** PINs rewritten under the new key so far, this run and the runs before it. */
  rewritten: number;
  /** PINs found already under the new key (rewritten by a run that was killed before it recorded its page). */
  already: number;
  /** Customers whose PIN opens with neither key (they could not log in before either); left as they are. */
  unreadable: string[];
}

export interface RotationOptions {
  /** Customers per page (per commit). */
  pageSize?: number;
  /** Cluster mode: the pending creation bindings, whose PINs are rotated first. */
  pending?: PendingCreations;
  /**
   * Called once the rotation is recorded (by this run or an earlier one), before any PIN is rewritten: cluster mode
   * checks there that no node serves (keys.ts). When it throws, a rotation this run recorded is removed again.
   */
  recorded?: () => Promise<void>;
  /** Told after every page. */
  onPage?: (progress: RotationProgress) => void;
  /** Test hooks (crash-point.ts): after each page is committed, and once every page is. */
  afterPage?: () => void;
  afterPages?: () => void;
}

/** Thrown when the keys given do not fit the store (the message says which and what to do). */
export class RotationRefused extends Error {}

export async function rotatePinKey(
  checks: KeyChecks,
  customers: CustomerRepository,
  keys: { current: PinKey; next: PinKey },
  where: string,
  options: RotationOptions = {},
): Promise<RotationProgress> {
  const from = pinKeyCheck(keys.current.key);
  const to = pinKeyCheck(keys.next.key);
  if (from === to) throw new RotationRefused('NEW_PIN_ENCRYPTION_KEY is the same key as PIN_ENCRYPTION_KEY');
  let rotation = await checks.get<PinRotationRecord>(PIN_ROTATION);
  if (rotation && (rotation.from !== from || rotation.to !== to)) {
    throw new RotationRefused(
      `a rotation of ${where} from another pair of keys is unfinished (started ${rotation.startedAt}): run it again ` +
        'with the PIN_ENCRYPTION_KEY and NEW_PIN_ENCRYPTION_KEY it was started with',
    );
  }
  let recordedNow = false;
  if (!rotation) {
    // The current key must be the stored PINs' (refused with the server's own message otherwise).
    await checkPinKey(checks, keys.current, () => samplePin(customers), where);
    rotation = { from, to, startedAt: new Date().toISOString(), rewritten: 0 };
    await checks.put(PIN_ROTATION, rotation);
    recordedNow = true;
  }
  try {
    await options.recorded?.();
  } catch (error) {
    if (recordedNow) await checks.remove(PIN_ROTATION);
    throw error;
  }

  const current = new PinCipher(keys.current.key);
  const next = new PinCipher(keys.next.key);
  const progress: RotationProgress = { rewritten: rotation.rewritten, already: 0, unreadable: [] };
  if (options.pending && !rotation.pendingDone) {
    const done = await rotatePendingCreations(options.pending, customers, { current, next }, options.pageSize ?? 500);
    progress.rewritten += done.rewritten;
    progress.already += done.already;
    progress.unreadable.push(...done.unreadable);
    rotation = { ...rotation, rewritten: progress.rewritten, pendingDone: true };
    await checks.put<PinRotationRecord>(PIN_ROTATION, rotation);
  }
  let after = rotation.after;
  for (;;) {
    const page = await customers.page(after, options.pageSize ?? 500);
    // Issued together, LMDB commits a page's rewrites in one synced transaction; its progress only after them.
    const outcomes = await Promise.all(page.records.map((record) => rewritePin(customers, record, current, next)));
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome === 'unreadable') progress.unreadable.push(page.records[i].value.customerId);
      else if (outcome !== 'gone') progress[outcome]++;
    }
    after = page.next ?? after;
    await checks.put<PinRotationRecord>(PIN_ROTATION, { ...rotation, after, rewritten: progress.rewritten });
    options.afterPage?.();
    options.onPage?.(progress);
    if (page.next === undefined) break;
  }
  options.afterPages?.();
  await checks.put<PinCheckRecord>(PIN_CHECK, { check: to, kind: keys.next.kind, at: new Date().toISOString() });
  await checks.remove(PIN_ROTATION);
  return progress;
}

/**
 * One account's secrets (its PIN and identity key) under `next`, revision-checked; when the account moved since it
 * was read (a write the rotation must not undo), it is read again and tested again.
 */
function rewritePin(
  customers: CustomerRepository,
  read: Versioned<CustomerRecord>,
  current: PinCipher,
  next: PinCipher,
): Promise<'rewritten' | 'already' | 'unreadable' | 'gone'> {
  let record: Versioned<CustomerRecord> | undefined = read;
  let first = true;
  return retryOnConflict(async () => {
    if (!first) record = await customers.get(read.value.customerId);
    first = false;
    if (!record) return 'gone';
    const { value, revision } = record;
    const moved = secretsUnder(value, current, next);
    if (moved === undefined) return 'unreadable';
    if (moved === value) return 'already';
    await customers.update(moved, revision);
    return 'rewritten';
  });
}
