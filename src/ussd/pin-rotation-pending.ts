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
import { secretsOf, secretsUnder, withoutSecrets } from './account-secrets.js';
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

/**
 * Every pending binding's secrets, its PIN and identity key (and its account's, when made from it), under `next`;
 * revision-checked writes.
 */
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
  if (account && isDeepStrictEqual(withoutSecrets(account.value), withoutSecrets(record))) {
    // The account made from this binding: one ciphertext of each secret for both.
    const secrets: Partial<CustomerRecord> = {};
    for (const { field, context } of secretsOf(record)) {
      const [mine, bound] = [account.value[field] as string, record[field] as string];
      const chosen = next.opens(mine, context)
        ? mine
        : next.opens(bound, context)
          ? bound
          : current.reencrypt(mine, context, next);
      if (chosen === undefined) return 'unreadable';
      secrets[field] = chosen;
    }
    const [moved, rebound] = [
      { ...account.value, ...secrets },
      { ...record, ...secrets },
    ];
    const accountMoves = !isDeepStrictEqual(moved, account.value);
    const bindingMoves = !isDeepStrictEqual(rebound, record);
    if (!accountMoves && !bindingMoves) return 'already';
    if (accountMoves) await customers.update(moved, account.revision);
    if (bindingMoves) await pending.updatePendingCreation(binding.creationKey, rebound, binding.revision);
    return 'rewritten';
  }
  // No account yet (or another account's under that ID, which a retry finds as it would have): the binding alone.
  const rebound = secretsUnder(record, current, next);
  if (rebound === undefined) return 'unreadable';
  if (rebound === record) return 'already';
  await pending.updatePendingCreation(binding.creationKey, rebound, binding.revision);
  return 'rewritten';
}
