// Shared by the repository contracts: a write refused because the record moved (RevisionConflictError).
import type { Test } from 'tap';
import { isRevisionConflict } from '../../dist/src/store/revision.js';

export async function rejectsWithConflict(t: Test, write: Promise<unknown>, message: string): Promise<void> {
  const error = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(isRevisionConflict(error), message);
}
