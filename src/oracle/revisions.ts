// Thread: any
// The shape of the oracle's plain record families (preferences, credits), written as
// a replicated key-value store (JetStream KV) would take them: a record is read with its revision, a new key
// is created only if absent, and an update names the revision it read and fails when it moved
// (RevisionConflictError, store/revision.ts).
import { retryOnConflict, type Revision, type Versioned } from '../store/revision.js';

/** A record family with create-only and revision-checked writes, keyed by `K` (each implementation encodes it). */
export interface RevisionedRecords<K, V> {
  get(key: K): Promise<Versioned<V> | undefined>;
  /** Writes a new record; RevisionConflictError when the key exists. Resolves with its revision. */
  create(key: K, value: V): Promise<Revision>;
  /** Replaces the record read at `revision`; RevisionConflictError when it was written since. */
  update(key: K, value: V, revision: Revision): Promise<Revision>;
}

/**
 * Read, change, write back, redone on a fresh read when another writer got in first (retryOnConflict).
 * `change` gets the current value (undefined: none yet) and returns the value to store and what to answer;
 * it must be free of side effects, it may run more than once.
 */
export function changeRecord<K, V, R>(
  records: RevisionedRecords<K, V>,
  key: K,
  change: (current: V | undefined) => { value: V; result: R },
): Promise<R> {
  return retryOnConflict(async () => {
    const current = await records.get(key);
    const { value, result } = change(current?.value);
    if (current) await records.update(key, value, current.revision);
    else await records.create(key, value);
    return result;
  });
}
