// Shared by both threads: the shape of the oracle's plain record families (preferences, credits), written as
// a replicated key-value store (JetStream KV) would take them: a record is read with its revision, a new key
// is created only if absent, and an update names the revision it read and fails when it moved
// (RevisionConflictError, store/revision.ts).
import { isRevisionConflict, type Revision, type Versioned } from '../store/revision.js';

/** A record family with create-only and revision-checked writes, keyed by `K` (each implementation encodes it). */
export interface RevisionedRecords<K, V> {
  get(key: K): Promise<Versioned<V> | undefined>;
  /** Writes a new record; RevisionConflictError when the key exists. Resolves with its revision. */
  create(key: K, value: V): Promise<Revision>;
  /** Replaces the record read at `revision`; RevisionConflictError when it was written since. */
  update(key: K, value: V, revision: Revision): Promise<Revision>;
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
      if (!isRevisionConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
