// Thread: any
// The LMDB implementation of RevisionedRecords for the oracle's plain record families
// (preferences, credits). The revision is kept on the stored object (store/revision.ts), so records written
// before revisions existed read as revision 0 and keep their shape. Each check and write is one LMDB
// transaction: serialised with every other writer of the environment, whatever thread it runs on.
import type { Database } from 'lmdb';
import { versioned, writeAtRevision, type Revision, type Stored } from '../../../store/revision.js';
import type { RevisionedRecords } from '../../../oracle/revisions.js';

export function lmdbRevisionedRecords<K, V extends object>(
  db: Database<Stored<V>, string>,
  keyOf: (key: K) => string,
): RevisionedRecords<K, V> {
  const write = (key: string, value: V, expected: Revision | undefined): Promise<Revision> =>
    db.transaction(() => writeAtRevision(db, key, value, expected));
  return {
    get: async (key) => versioned(db.get(keyOf(key))),
    create: (key, value) => write(keyOf(key), value, undefined),
    update: (key, value, revision) => write(keyOf(key), value, revision),
  };
}
