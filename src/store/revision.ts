// Thread: any
// Revision-checked writes, the one shape every repository's updates take: a read answers the record with its
// revision, an update names the revision it read and is refused when the record moved since. In cluster mode the
// JetStream record store (src/cluster/record-store.ts) does it with an expected sequence plus a message id, since
// nats-server 2.9.10's own check lets racing writers through; LMDB keeps the revision on the record and checks it
// inside the write transaction (writeIfRevision below).
import type { Database } from 'lmdb';
import { TransientError } from '../base/errors.js';

/** Increases with every write of one record; 0 for a record written before revisions were kept. */
export type Revision = number;

export interface Versioned<T> {
  readonly value: T;
  readonly revision: Revision;
}

/**
 * An update named a revision that is no longer the record's (another writer came first, or it is gone): transient,
 * since the same call made again reads the record anew (retryOnConflict does, at once).
 */
export class RevisionConflictError extends TransientError<'revision_conflict'> {
  constructor(key: string, expected: Revision | undefined) {
    super('revision_conflict', `${key} changed since revision ${expected ?? 'none'}`, undefined, {
      key,
      expected,
    });
  }
}

export function isRevisionConflict(error: unknown): boolean {
  return error instanceof TransientError && error.code === 'revision_conflict';
}

/** How LMDB stores a versioned record: the value's own fields plus `revision`. */
export type Stored<T> = T & { revision?: Revision };

/** The record and its revision, as stored in LMDB; undefined when there is none. */
export function versioned<T extends object>(stored: Stored<T> | undefined): Versioned<T> | undefined {
  if (stored === undefined) return undefined;
  const { revision = 0, ...value } = stored;
  return { value: value as T, revision };
}

/**
 * Inside an LMDB write transaction: writes `value` when the stored record's revision is `expected` (`undefined`:
 * only when there is none, create-only). `current`: the stored record, when the caller has read it already.
 * Answers the new revision, or undefined when the check failed.
 */
export function writeIfRevision<T extends object>(
  db: Database<Stored<T>, string>,
  key: string,
  value: T,
  expected: Revision | undefined,
  current = db.get(key),
): Revision | undefined {
  const matches =
    expected === undefined ? current === undefined : current !== undefined && (current.revision ?? 0) === expected;
  if (!matches) return undefined;
  const revision = (expected ?? 0) + 1;
  db.putSync(key, { ...value, revision });
  return revision;
}

/** writeIfRevision for a caller with nothing else to do on a failed check: throws RevisionConflictError. */
export function writeAtRevision<T extends object>(
  db: Database<Stored<T>, string>,
  key: string,
  value: T,
  expected: Revision | undefined,
): Revision {
  const revision = writeIfRevision(db, key, value, expected);
  if (revision === undefined) throw new RevisionConflictError(key, expected);
  return revision;
}

/** Enough attempts for every writer of one key to win once under any realistic contention. */
const MAX_CONFLICT_ATTEMPTS = 100;

/**
 * Optimistic concurrency: runs `attempt` (read, decide, revision-checked write) again while it fails with a
 * revision conflict, i.e. while another writer got in first; the last conflict is thrown after 100 attempts.
 * `attempt` must be free of side effects besides its write, since it may run more than once.
 */
export async function retryOnConflict<R>(attempt: () => Promise<R>): Promise<R> {
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRevisionConflict(error) || attempts >= MAX_CONFLICT_ATTEMPTS) throw error;
      await backOffAfterConflict(attempts);
    }
  }
}

/**
 * A random pause after the `attempt`th lost race, growing to 50 ms. In cluster mode the winner's write is in flight
 * until a quorum fsynced it: a loser that re-read and wrote again at once would read the old revision and lose
 * again (its write a duplicate of the same expected revision) for as long as that takes, and use up its attempts.
 */
export function backOffAfterConflict(attempt: number): Promise<void> {
  const ceilingMs = Math.min(50, 2 * 1.5 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceilingMs));
}
