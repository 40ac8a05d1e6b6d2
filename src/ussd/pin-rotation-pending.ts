// Thread: main
// npm run rotate-pin-key in cluster mode (src/tools/keys.ts), before the accounts: the PINs in pending creation
// bindings. A keyed account create in JetStream (src/cluster/records/ussd/customers.ts) first binds the creation key to
// the whole record it is about to write, PIN included; a node that died before confirming leaves it pending, and the
// request's retry finishes it from that record. Left under the old key, such a retry would create an account whose
// PIN no key opens. And when the account was written already (step 2), the retry holds the account to be the pending
// record field for field: the binding and the account must then carry the very same ciphertext (AES-GCM with a
// random nonce never encrypts twice alike), or the retry takes the account for another one's and answers that the
// ID is taken. So both get one new ciphertext, account first; a run killed between the two writes finds one of them
// under the new key on resumption and copies it to the other.
import { isDeepStrictEqual } from 'node:util';
import type { PinCipher } from './actor/pin-cipher.js';
import type { CustomerRecord, CustomerRepository } from './customers/repository.js';
import type { Revision } from '../store/revision.js';

/** A creation binding still pending (its node died before step 3): it holds a whole record, the PIN too. */
export interface PendingCreation {
  creationKey: string;
  pending: CustomerRecord;
  revision: Revision;
}

/** Where pending bindings are: JetStreamCustomerRepository (LMDB's creations hold only IDs, written with the account). */
export interface PendingCreations {
  pendingCreations(after: string | undefined, limit: number): Promise<{ records: PendingCreation[]; next?: string }>;
  updatePendingCreation(creationKey: string, pending: CustomerRecord, expected: Revision): Promise<Revision>;
}

export interface PendingOutcome {
  rewritten: number;
  already: number;
  /** Customer IDs whose pending PIN opens with neither key. */
  unreadable: string[];
}

/** Every pending binding's PIN (and its account's, when made from it) under `next`; revision-checked writes. */
export async function rotatePendingCreations(
  pending: PendingCreations,
  customers: CustomerRepository,
  ciphers: { current: PinCipher; next: PinCipher },
  pageSize: number,
): Promise<PendingOutcome> {
  const outcome: PendingOutcome = { rewritten: 0, already: 0, unreadable: [] };
  let after: string | undefined;
  do {
    const page = await pending.pendingCreations(after, pageSize);
    for (const binding of page.records) {
      const done = await rotateOne(binding, pending, customers, ciphers);
      if (done === 'unreadable') outcome.unreadable.push(binding.pending.customerId);
      else outcome[done]++;
    }
    after = page.next;
  } while (after !== undefined);
  return outcome;
}

async function rotateOne(
  binding: PendingCreation,
  pending: PendingCreations,
  customers: CustomerRepository,
  { current, next }: { current: PinCipher; next: PinCipher },
): Promise<'rewritten' | 'already' | 'unreadable'> {
  const record = binding.pending;
  const id = record.customerId;
  const account = await customers.get(id);
  if (account && isDeepStrictEqual({ ...account.value, pin: '' }, { ...record, pin: '' })) {
    // The account made from this binding: one ciphertext for both.
    const pin = next.opens(account.value.pin, id)
      ? account.value.pin
      : next.opens(record.pin, id)
        ? record.pin
        : current.reencrypt(account.value.pin, id, next);
    if (pin === undefined) return 'unreadable';
    if (account.value.pin === pin && record.pin === pin) return 'already';
    if (account.value.pin !== pin) await customers.update({ ...account.value, pin }, account.revision);
    if (record.pin !== pin)
      await pending.updatePendingCreation(binding.creationKey, { ...record, pin }, binding.revision);
    return 'rewritten';
  }
  // No account yet (or another account's under that ID, which a retry finds as it would have): the binding alone.
  if (next.opens(record.pin, id)) return 'already';
  const pin = current.reencrypt(record.pin, id, next);
  if (pin === undefined) return 'unreadable';
  await pending.updatePendingCreation(binding.creationKey, { ...record, pin }, binding.revision);
  return 'rewritten';
}
