// Thread: any holding a NATS connection, cluster mode
// Customer accounts in two replicated JetStream KV buckets,
// `ussd_customers` (by customer ID) and `ussd_account_creations` (creation key -> the account it makes). KV has no
// transaction over two keys, so a keyed create is three writes, each safe to be the last one a dying node makes:
// 1. the key is bound, create-only, to the whole record it is about to create (pending);
// 2. the account is created, create-only, from the pending record;
// 3. the binding is confirmed (revision-checked) and only then is the account answered.
// Whoever finds a pending binding (the same request retried through another node, after a crash or concurrently)
// finishes it from the stored record, so the account has the first attempt's ID and PIN and exists once. While a
// binding is pending nobody has been told its ID, so its account can only have changed if another account took
// that ID first: then the binding is dropped and the caller is told the ID is taken.
import { isDeepStrictEqual } from 'node:util';
import type { ClusterConnection } from '../../connection.js';
import { scanRecords } from '../../record-scan.js';
import { KvRecordStore } from '../../record-store.js';
import { isRevisionConflict, type Revision, type Versioned } from '../../../store/revision.js';
import type {
  CreateOutcome,
  CustomerPage,
  CustomerRecord,
  CustomerRepository,
} from '../../../ussd/customers/repository.js';
import type { PendingCreation } from '../../../ussd/pin-rotation-pending.js';

export type CreationBinding = { pending: CustomerRecord } | { customerId: string };

/** Each round that does not answer saw another writer's committed step; the bound only catches a bug. */
const MAX_CREATE_ROUNDS = 16;

export class JetStreamCustomerRepository implements CustomerRepository {
  private constructor(
    private readonly connection: ClusterConnection,
    private readonly accounts: KvRecordStore<CustomerRecord>,
    private readonly creations: KvRecordStore<CreationBinding>,
  ) {}

  static async open(connection: ClusterConnection): Promise<JetStreamCustomerRepository> {
    const [accounts, creations] = await Promise.all([
      KvRecordStore.open<CustomerRecord>(connection, { name: 'ussd_customers' }),
      KvRecordStore.open<CreationBinding>(connection, { name: 'ussd_account_creations' }),
    ]);
    return new JetStreamCustomerRepository(connection, accounts, creations);
  }

  get(customerId: string): Promise<Versioned<CustomerRecord> | undefined> {
    return this.accounts.get([customerId]);
  }

  async create(record: CustomerRecord, creationKey?: string): Promise<CreateOutcome> {
    if (creationKey === undefined) return this.#createAccount(record);
    const key = [creationKey];
    for (let round = 0; round < MAX_CREATE_ROUNDS; round++) {
      const binding = (await this.creations.get(key)) ?? (await this.#bind(key, record));
      if (!binding) continue; // another attempt bound the key in between: read its binding
      if ('customerId' in binding.value) {
        const account = await this.accounts.get([binding.value.customerId]);
        if (account) return { outcome: 'existing', customer: account };
        throw new Error(`creation key ${creationKey} names a missing account ${binding.value.customerId}`);
      }
      const finished = await this.#finish(key, binding.value.pending, binding.revision);
      if (finished === 'moved') continue;
      if (finished === 'id-taken') {
        // The pending record was this call's (its ID is taken): the caller tries another ID. Another attempt's: read again.
        if (binding.value.pending.customerId === record.customerId) return { outcome: 'id-taken' };
        continue;
      }
      // `created` for the call whose record it is, whoever wrote it; `existing` for any other attempt with this key.
      const mine = binding.value.pending.customerId === record.customerId;
      return { outcome: mine ? 'created' : 'existing', customer: finished };
    }
    throw new Error(`creation key ${creationKey}: too many concurrent attempts`);
  }

  update(record: CustomerRecord, expected: Revision): Promise<Revision> {
    return this.accounts.update([record.customerId], record, expected);
  }

  /** In write order (a walk over every account reads each once: record-scan.ts); the cursor is a bucket sequence. */
  async page(after: string | undefined, limit: number): Promise<CustomerPage> {
    const page = await scanRecords<CustomerRecord>(this.connection, this.accounts.bucket, [], cursor(after), limit);
    const records = page.records.map(({ value, revision }) => ({ value, revision }));
    return page.next === undefined ? { records } : { records, next: String(page.next) };
  }

  /**
   * Up to `limit` pending creation bindings after cursor `after` (a PIN key rotation re-encrypts their PINs with the
   * accounts', pin-rotation-pending.ts); `next` when there may be more.
   */
  async pendingCreations(
    after: string | undefined,
    limit: number,
  ): Promise<{ records: PendingCreation[]; next?: string }> {
    const page = await scanRecords<CreationBinding>(this.connection, this.creations.bucket, [], cursor(after), limit);
    const records = page.records.flatMap(({ key, value, revision }) =>
      'pending' in value ? [{ creationKey: key[0], pending: value.pending, revision }] : [],
    );
    return page.next === undefined ? { records } : { records, next: String(page.next) };
  }

  /** Replaces a pending binding's record if the binding is still at `expected`; RevisionConflictError otherwise. */
  updatePendingCreation(creationKey: string, pending: CustomerRecord, expected: Revision): Promise<Revision> {
    return this.creations.update([creationKey], { pending }, expected);
  }

  async #createAccount(record: CustomerRecord): Promise<CreateOutcome> {
    try {
      return {
        outcome: 'created',
        customer: { value: record, revision: await this.accounts.create([record.customerId], record) },
      };
    } catch (error) {
      if (isRevisionConflict(error)) return { outcome: 'id-taken' };
      throw error;
    }
  }

  /** Step 1: binds the key to `record`, pending; undefined when another attempt bound it first. */
  async #bind(key: string[], record: CustomerRecord): Promise<Versioned<CreationBinding> | undefined> {
    const value = { pending: record };
    try {
      return { value, revision: await this.creations.create(key, value) };
    } catch (error) {
      if (isRevisionConflict(error)) return undefined;
      throw error;
    }
  }

  /**
   * Steps 2 and 3 for a pending binding: the account, then the confirmation; answers the account.
   * `id-taken`: another account has the pending ID (the binding is dropped); `moved`: the binding changed meanwhile.
   */
  async #finish(
    key: string[],
    pending: CustomerRecord,
    bindingRevision: Revision,
  ): Promise<Versioned<CustomerRecord> | 'id-taken' | 'moved'> {
    const created = await this.#createAccount(pending);
    const account = created.outcome === 'created' ? created.customer : await this.accounts.get([pending.customerId]);
    if (!account || !isDeepStrictEqual(account.value, asStored(pending))) {
      // Not the pending record: another account holds its ID (or the binding was confirmed and the account used since).
      try {
        await this.creations.delete(key, bindingRevision);
        return 'id-taken';
      } catch (error) {
        if (isRevisionConflict(error)) return 'moved';
        throw error;
      }
    }
    try {
      await this.creations.update(key, { customerId: pending.customerId }, bindingRevision);
    } catch (error) {
      // Another attempt confirmed it first; anything else (dropped) means the account is not this binding's.
      if (!isRevisionConflict(error)) throw error;
      const now = await this.creations.get(key);
      if (!now || !('customerId' in now.value) || now.value.customerId !== pending.customerId) return 'moved';
    }
    return account;
  }
}

/** A page cursor: the bucket sequence of the last record of the previous page. */
function cursor(after: string | undefined): number {
  const sequence = after === undefined ? 0 : Number(after);
  if (!Number.isSafeInteger(sequence) || sequence < 0) throw new RangeError(`not a customer page cursor: ${after}`);
  return sequence;
}

/** A record as a read answers it: JSON drops fields set to undefined. */
const asStored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
