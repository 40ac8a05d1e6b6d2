// Thread: any
// store_commit_duration_seconds, one observation per transaction, nothing per write: for lmdb's asynchronous
// writes from its own events (`beforecommit` fires once per write batch, the writes of one event-loop turn, and
// `committed` settles when that batch is synced), and for this thread's synchronous turn commits (turn-commit.ts)
// from their own timing.
// store_disk_*: the file system under DATA_DIR, read at each scrape (one statfs, a few microseconds).
import { statfsSync } from 'node:fs';
import type { Store } from '../store/env.js';
import { diskAvailable, diskSize, storeCommitDuration } from './catalogue.js';

const commits = storeCommitDuration.with();
const ignore = () => {};

export function timeStoreCommits({ root, turn }: Store): void {
  turn.onCommitted((seconds) => commits.observe(seconds));
  root.on('beforecommit', function timeCommit() {
    const started = performance.now();
    // A failed commit rejects the writers' own promises; here it is only not timed.
    root.committed.then(() => commits.observe((performance.now() - started) / 1000), ignore);
  });
}

/** At each scrape: the free and total bytes of the file system holding `dataDir` (left as they were if it fails). */
export function measureDisk(dataDir: string): void {
  const read = () => {
    try {
      return statfsSync(dataDir);
    } catch {
      return undefined;
    }
  };
  diskAvailable.collect = (family) => {
    const stats = read();
    if (stats) family.with().value = stats.bavail * stats.bsize;
  };
  diskSize.collect = (family) => {
    const stats = read();
    if (stats) family.with().value = stats.blocks * stats.bsize;
  };
}
