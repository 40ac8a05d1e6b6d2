// Shared by both threads: what every oracle repository's writes have in common, so one written for a
// replicated key-value store (JetStream KV) can stand in for the LMDB one. A record is read with its revision;
// a new key is created only if absent, and an update names the revision it read and fails when it moved.
import { DomainError } from '../runtime/errors.js';

export interface Revisioned<T> {
  readonly value: T;
  /** Grows on every write of the key; what an update must name. */
  readonly revision: number;
}

/** A create-only write found the key taken, or an update's expected revision was not the stored one. */
export class RevisionConflictError extends DomainError<'revision_conflict'> {
  constructor(what: string) {
    super('revision_conflict', `${what} changed meanwhile`);
  }
}

/** A record family with create-only and revision-checked writes, keyed by `K` (each implementation encodes it). */
export interface RevisionedRecords<K, V> {
  get(key: K): Promise<Revisioned<V> | undefined>;
  /** Writes a new record; RevisionConflictError when the key exists. Resolves with its revision. */
  create(key: K, value: V): Promise<number>;
  /** Replaces the record read at `revision`; RevisionConflictError when it was written since. */
  update(key: K, value: V, revision: number): Promise<number>;
}

/** Enough retries for every writer of one key to win once under any realistic contention. */
const MAX_ATTEMPTS = 100;

/**
 * Read, change, write back; a conflict means another writer got in first, so read again and redo the change
 * (optimistic concurrency, as on a KV bucket). `change` gets the current value (undefined: none yet) and
 * returns the value to store and what to answer; it must be free of side effects, it may run more than once.
 */
export async function changeRecord<K, V, R>(records: RevisionedRecords<K, V>, key: K, change: (current: V | undefined) => { value: V; result: R }): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    const current = await records.get(key);
    const { value, result } = change(current?.value);
    try {
      if (current) await records.update(key, value, current.revision);
      else await records.create(key, value);
      return result;
    } catch (error) {
      if (!(error instanceof RevisionConflictError) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
