// Main thread or actor hosts (cluster mode): the USSD face's customer accounts in a replicated JetStream KV bucket,
// the same CustomerRepository the LMDB store implements, held to the same contract (test/contracts/customers.ts).
// Records: `customer.<id>` (the account) and `creation.<key>` (creation key -> customer ID). KV has no
// transaction across two keys, so create writes the account first (create-only: an ID is issued once) and binds
// the creation key after; a request that loses the key to a concurrent one with the same key removes the account
// it just made (no one was given its ID) and answers the winner's.
import { isRevisionConflict, type Revision, type Versioned } from '../../store/revision.js';
import type { CreateOutcome, CustomerRecord, CustomerRepository } from '../../ussd/customers/repository.js';
import type { ClusterConnection } from '../connection.js';
import { KvRecordStore } from '../record-store.js';

type Stored = CustomerRecord | { customerId: string };

export class JetStreamCustomerRepository implements CustomerRepository {
  private constructor(private readonly store: KvRecordStore<Stored>) {}

  static async open(connection: ClusterConnection, bucket = 'ussd_customers'): Promise<JetStreamCustomerRepository> {
    return new JetStreamCustomerRepository(await KvRecordStore.open<Stored>(connection, { name: bucket }));
  }

  get(customerId: string): Promise<Versioned<CustomerRecord> | undefined> {
    return this.store.get(['customer', customerId]) as Promise<Versioned<CustomerRecord> | undefined>;
  }

  async create(record: CustomerRecord, creationKey?: string): Promise<CreateOutcome> {
    const earlier = creationKey === undefined ? undefined : await this.#bound(creationKey);
    if (earlier) return { outcome: 'existing', customer: earlier };
    let revision: Revision;
    try {
      revision = await this.store.create(['customer', record.customerId], record);
    } catch (error) {
      if (isRevisionConflict(error)) return { outcome: 'id-taken' };
      throw error;
    }
    if (creationKey !== undefined) {
      try {
        await this.store.create(['creation', creationKey], { customerId: record.customerId });
      } catch (error) {
        if (!isRevisionConflict(error)) throw error;
        await this.store.delete(['customer', record.customerId], revision);
        const winner = await this.#bound(creationKey);
        if (!winner) throw new Error(`creation key ${creationKey} is bound to an account that does not exist`);
        return { outcome: 'existing', customer: winner };
      }
    }
    return { outcome: 'created', customer: { value: record, revision } };
  }

  update(record: CustomerRecord, expected: Revision): Promise<Revision> {
    return this.store.update(['customer', record.customerId], record, expected);
  }

  /** The account a creation key is bound to, if any. */
  async #bound(creationKey: string): Promise<Versioned<CustomerRecord> | undefined> {
    const binding = await this.store.get(['creation', creationKey]);
    return binding ? this.get(binding.value.customerId) : undefined;
  }
}
