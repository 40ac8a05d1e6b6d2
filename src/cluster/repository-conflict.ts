// Cluster mode (any thread holding a NATS connection): the record store's RevisionConflict as the repositories'
// RevisionConflictError, so callers of a repository see one conflict type whichever store is behind it.
import { RevisionConflictError } from '../store/revision.js';
import { RevisionConflict } from './record-store.js';

/** Runs a record-store write; a RevisionConflict comes out as RevisionConflictError for `id`, other errors as they are. */
export async function conflictAsRepositoryError<R>(id: string, write: () => Promise<R>): Promise<R> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof RevisionConflict)) throw error;
    throw new RevisionConflictError(id, error.expected === 0 ? undefined : error.expected);
  }
}
