// Thread: any
// Customer accounts in LMDB, databases `ussd-customers` (by customer ID) and
// `ussd-account-creations` (creation key -> customer ID). Each write is one LMDB write transaction, which
// LMDB serialises across threads and processes, so its checks (ID unused, key unbound, revision) are final.
import type { Database } from 'lmdb';
import type { Store } from '../../../store/env.js';
import {
  versioned,
  writeAtRevision,
  writeIfRevision,
  type Revision,
  type Stored,
  type Versioned,
} from '../../../store/revision.js';
import type {
  CreateOutcome,
  CustomerPage,
  CustomerRecord,
  CustomerRepository,
} from '../../../ussd/customers/repository.js';

export class LmdbCustomerRepository implements CustomerRepository {
  readonly #accounts: Database<Stored<CustomerRecord>, string>;
  readonly #creations: Database<string, string>;

  constructor(store: Store) {
    this.#accounts = store.db('ussd-customers');
    this.#creations = store.db('ussd-account-creations');
  }

  async get(customerId: string): Promise<Versioned<CustomerRecord> | undefined> {
    return versioned(this.#accounts.get(customerId));
  }

  create(record: CustomerRecord, creationKey?: string): Promise<CreateOutcome> {
    return this.#accounts.transaction((): CreateOutcome => {
      const earlier = creationKey === undefined ? undefined : this.#creations.get(creationKey);
      const existing = earlier === undefined ? undefined : versioned(this.#accounts.get(earlier));
      if (existing) return { outcome: 'existing', customer: existing };
      const revision = writeIfRevision(this.#accounts, record.customerId, record, undefined);
      if (revision === undefined) return { outcome: 'id-taken' };
      if (creationKey !== undefined) this.#creations.putSync(creationKey, record.customerId);
      return { outcome: 'created', customer: { value: record, revision } };
    });
  }

  async update(record: CustomerRecord, expected: Revision): Promise<Revision> {
    return this.#accounts.transaction(() => writeAtRevision(this.#accounts, record.customerId, record, expected));
  }

  async page(after: string | undefined, limit: number): Promise<CustomerPage> {
    // The smallest key after `after`: itself followed by the lowest code unit.
    const range = this.#accounts.getRange({ start: after === undefined ? undefined : `${after}\0`, limit: limit + 1 });
    const records: Versioned<CustomerRecord>[] = [];
    let more = false;
    for (const { value } of range) {
      if (records.length === limit) {
        more = true;
        break;
      }
      records.push(versioned(value)!);
    }
    return more ? { records, next: records[records.length - 1].value.customerId } : { records };
  }
}
