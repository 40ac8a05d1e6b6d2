// Cluster mode (any thread holding a NATS connection): customer accounts in two replicated JetStream KV buckets,
// `ussd_customers` (by customer ID) and `ussd_account_creations` (creation key -> customer ID). KV has no
// transaction over two keys, so a create writes the account (create-only: the ID is unused cluster-wide), then
// binds the creation key (create-only). When another attempt with the same key bound first, this attempt withdraws
// its account (its ID was never shown to anyone) and answers the bound one; a key is only bound to an account
// that exists, so a bound key always names an account. Unlike LMDB's one transaction, a node dying between the two
// writes leaves an account no key names: never answered to anyone, but the retry creates another one.
import type { ClusterConnection } from '../../cluster/connection.js';
import { KvRecordStore, RevisionConflict } from '../../cluster/record-store.js';
import { conflictAsRepositoryError } from '../../cluster/repository-conflict.js';
import type { Revision, Versioned } from '../../store/revision.js';
import type { CreateOutcome, CustomerRecord, CustomerRepository } from './repository.js';

interface CreationBinding {
  customerId: string;
}

export class JetStreamCustomerRepository implements CustomerRepository {
  private constructor(
    private readonly accounts: KvRecordStore<CustomerRecord>,
    private readonly creations: KvRecordStore<CreationBinding>,
  ) {}

  static async open(connection: ClusterConnection): Promise<JetStreamCustomerRepository> {
    const [accounts, creations] = await Promise.all([
      KvRecordStore.open<CustomerRecord>(connection, { name: 'ussd_customers' }),
      KvRecordStore.open<CreationBinding>(connection, { name: 'ussd_account_creations' }),
    ]);
    return new JetStreamCustomerRepository(accounts, creations);
  }

  get(customerId: string): Promise<Versioned<CustomerRecord> | undefined> {
    return this.accounts.get([customerId]);
  }

  async create(record: CustomerRecord, creationKey?: string): Promise<CreateOutcome> {
    const earlier = creationKey === undefined ? undefined : await this.#boundTo(creationKey);
    if (earlier) return { outcome: 'existing', customer: earlier };
    let revision: Revision;
    try {
      revision = await this.accounts.create([record.customerId], record);
    } catch (error) {
      if (error instanceof RevisionConflict) return { outcome: 'id-taken' };
      throw error;
    }
    const created: CreateOutcome = { outcome: 'created', customer: { value: record, revision } };
    if (creationKey !== undefined) {
      try {
        await this.creations.create([creationKey], { customerId: record.customerId });
      } catch (error) {
        if (!(error instanceof RevisionConflict)) throw error;
        const binding = await this.creations.get([creationKey]);
        // Answered as a conflict, yet this attempt's binding is stored (a write resent after it landed): done.
        if (binding?.value.customerId === record.customerId) return created;
        // The same request, retried through another node, bound its own account first: that one is the answer.
        await this.accounts.delete([record.customerId], revision);
        const bound = binding && (await this.accounts.get([binding.value.customerId]));
        if (!bound) throw error;
        return { outcome: 'existing', customer: bound };
      }
    }
    return created;
  }

  update(record: CustomerRecord, expected: Revision): Promise<Revision> {
    return conflictAsRepositoryError(record.customerId, () => this.accounts.update([record.customerId], record, expected));
  }

  /** The account a creation key is bound to, if any. */
  async #boundTo(creationKey: string): Promise<Versioned<CustomerRecord> | undefined> {
    const binding = await this.creations.get([creationKey]);
    return binding && this.accounts.get([binding.value.customerId]);
  }
}
