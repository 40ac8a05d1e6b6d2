// Thread: any (wherever a NATS connection is)
// A watch over the records of a KV bucket under a key prefix, kept
// alive by a watchdog (the KV library's watch can stop without saying so). KvRecordStore.watch is this.
import type { KV } from '@nats-io/kv';
import type { Revision } from '../store/revision.js';
import { decodeKey, prefixFilter, type RecordKey } from './keys.js';
import { whilePassing } from './passing.js';
import type { LastWrite } from './record-store.js';

/** One write seen by a watcher: the record's new value, or undefined when it was deleted. */
export interface RecordChange<T> {
  key: string[];
  value: T | undefined;
  revision: Revision;
}

/** How often a watch checks that it still delivers. */
const WATCHDOG_MS = 5_000;

/**
 * Calls `onChange` with the current record of every key under `prefix`, then with every write after it, in the
 * bucket's order. Resolves once the watch is set up; `stop()` ends it. Its consumer may sit on a server still
 * catching up, whose "current" records are older than what was acknowledged (later writes follow, in order): a
 * caller that needs every write acknowledged before some moment waits until the watch delivered a sequence the
 * stream leader gave (`lastSequence`, or a write's own revision), as the revocations and the lease table do.
 *
 * The KV library's watch stops for good when its consumer is gone (measured: its consumer deleted, then 20 s of
 * writes and nothing delivered, nothing ended), which a fault can bring about; a lease table or a revocation list
 * would then stay as it was. So a watchdog asks the stream leader every WATCHDOG_MS for the newest write under
 * the prefix: one that is still not delivered at the next look means the watch is stuck, and it is made again
 * from the write after the last one delivered (as when the library ends it), so nothing in between is missed.
 */
export async function watchRecords<T>(
  kv: KV,
  prefix: RecordKey,
  onChange: (change: RecordChange<T>) => void,
  lastWrite: () => Promise<LastWrite | undefined>,
): Promise<{ stop(): void }> {
  const key = prefixFilter(prefix);
  let delivered = 0;
  let stopped = false;
  const open = () =>
    whilePassing(() => kv.watch({ key, ...(delivered > 0 ? { resumeFromRevision: delivered + 1 } : {}) }));
  let watcher = await open();
  void (async () => {
    while (!stopped) {
      for await (const entry of watcher) {
        delivered = entry.revision;
        onChange({
          key: decodeKey(entry.key),
          value: entry.operation === 'PUT' ? entry.json<T>() : undefined,
          revision: entry.revision,
        });
      }
      while (!stopped) {
        try {
          watcher = await open();
          if (stopped) watcher.stop(); // stopped while it was being made
          break;
        } catch (error) {
          // The connection closed for good (the node is stopping): nothing to watch with any more.
          if ((error as Error).name === 'ClosedConnectionError') return halt();
          await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
        }
      }
    }
  })();
  let behind = 0;
  let looking = false;
  const watchdog = setInterval(async () => {
    if (looking || stopped) return;
    looking = true;
    try {
      const newest = (await lastWrite())?.revision ?? 0;
      if (behind > 0 && delivered < behind) watcher.stop();
      behind = newest > delivered ? newest : 0;
    } catch {
      // No leader to ask now: look again next time.
    } finally {
      looking = false;
    }
  }, WATCHDOG_MS);
  watchdog.unref();
  function halt() {
    stopped = true;
    clearInterval(watchdog);
    watcher.stop();
  }
  return { stop: halt };
}
