// store_commit_duration_seconds from lmdb's own events: `beforecommit` fires once per write batch (lmdb groups
// the writes of one event-loop turn), and `committed` settles when that batch is synced. One timer per batch,
// nothing per write.
import type { RootDatabase } from 'lmdb';
import { storeCommitDuration } from './catalogue.js';

const commits = storeCommitDuration.with();
const ignore = () => {};

export function timeStoreCommits(root: RootDatabase): void {
  root.on('beforecommit', function timeCommit() {
    const started = performance.now();
    // A failed commit rejects the writers' own promises; here it is only not timed.
    root.committed.then(() => commits.observe((performance.now() - started) / 1000), ignore);
  });
}
