// Thread: any (that opens the store)
// Keeps LMDB from meeting a full disk, and answers the writes it refuses.
//
// Why: lmdb 3.5.6's bundled mdb.c answers a failed page write (mdb_page_flush) by formatting up to ~120 bytes into
// a 100-byte heap buffer (`last_error = malloc(100); sprintf(last_error, "Attempting to write page at position %u,
// ...")`), which corrupts the heap and aborts the process (glibc `malloc(): ...`, SIGABRT). So below
// DATA_DIR_MIN_FREE_BYTES of free space every write that may need new pages is refused here, before LMDB sees it;
// removals pass, so deletes and the USSD expiry sweep still run (they free pages). And lmdb's write.js leaves a
// promise nobody can handle when an asynchronous commit fails anyway (the `commitError` of each refused write,
// rejected after it): that crashed the actor hosts. Each asynchronous write's failure is handled here and answered
// with the same StorageUnavailableError, which the faces turn into their "try again later" answers.
import type { Database, RootDatabase } from 'lmdb';
import { TRANSIENT_CODES, TransientError } from '../base/errors.js';
import { storeWritesRefused } from '../metrics/catalogue.js';
import type { FreeSpace } from './free-space.js';

/** Seconds a client is told to wait before trying a refused write again (Retry-After). */
export const STORAGE_RETRY_AFTER_SECONDS = TRANSIENT_CODES.storage_unavailable.retryAfterSeconds;

/** A write refused because DATA_DIR's disk is (nearly) full, or whose commit failed: nothing of it was stored. */
export class StorageUnavailableError extends TransientError<'storage_unavailable'> {
  constructor(reason: 'low_space' | 'commit_failed', message: string, details: Record<string, unknown> = {}) {
    super('storage_unavailable', message, STORAGE_RETRY_AFTER_SECONDS, {
      reason,
      retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
      ...details,
    });
  }
}

/** True for a StorageUnavailableError, also after it crossed threads (a TransientError with its code). */
export function isStorageUnavailable(error: unknown): error is TransientError<'storage_unavailable'> {
  return error instanceof TransientError && error.code === 'storage_unavailable';
}

/** Calls that add records: refused below the floor when called outside a transaction. */
const GROWING_ASYNC = [
  'put',
  'ifNoExists',
  'ifVersion',
  'batch',
  'transaction',
  'transactionAsync',
  'childTransaction',
];
const GROWING_SYNC = ['putSync', 'transactionSync'];
/** Calls that only take records away: never refused (their own transactions pass the floor). */
const FREEING = ['remove', 'removeSync', 'del', 'drop', 'dropSync', 'clearAsync', 'clearSync'];
/** Calls whose first argument is a callback run inside the write transaction. */
const TRANSACTIONS = new Set(['transaction', 'transactionAsync', 'childTransaction', 'transactionSync']);

// Per thread (each thread has its own module): inside a transaction's callback, its entry was checked already and
// lmdb's own calls inside it must keep their return values (putSync compares put's answer by identity).
let inTransaction = 0;
let freeing = 0;

const lowSpace = storeWritesRefused.with('low_space');
const commitFailed = storeWritesRefused.with('commit_failed');

/**
 * Runs `remove` (a caller's transaction that only removes records, or moves counters down) past the floor: what
 * frees space must not be refused for lack of it. Only the synchronous part of the call is exempt.
 */
export function freeingSpace<T>(remove: () => T): T {
  freeing++;
  try {
    return remove();
  } finally {
    freeing--;
  }
}

/** Throws StorageUnavailableError when `space` is below its floor (counted in store_writes_refused_total). */
export function assertRoom(space: FreeSpace): void {
  if (space.roomy) return;
  lowSpace.inc();
  const { freeBytes, minFreeBytes } = space.reading();
  throw new StorageUnavailableError(
    'low_space',
    `DATA_DIR has ${freeBytes} bytes free, below DATA_DIR_MIN_FREE_BYTES (${minFreeBytes}): writes are refused until space is freed`,
    { freeBytes, minFreeBytes },
  );
}

/** A failed asynchronous commit as StorageUnavailableError, its `commitError` handled; other errors as they are. */
export function answerCommitFailure(error: unknown): never {
  const commitError = (error as { commitError?: Promise<unknown> } | undefined)?.commitError;
  if (commitError === undefined || typeof commitError.then !== 'function') throw error;
  // lmdb rejects it right after this write's own rejection, with the native error: logged by lmdb already.
  commitError.then(undefined, () => {});
  commitFailed.inc();
  throw new StorageUnavailableError('commit_failed', 'The write could not be committed to DATA_DIR', {
    cause: (error as Error).message,
  });
}

let absorbing = false;

/**
 * Once per thread: lmdb also rejects a promise of its own that nobody holds when an asynchronous commit fails (the
 * batch-start instruction of an event-loop turn's writes, write.js), and its `commitError`. Every write of that
 * batch was answered (answerCommitFailure), so those two are dropped here; any other unhandled rejection is
 * raised as Node does without a listener, unless another listener (a test runner) takes it.
 */
export function absorbCommitRejections(): void {
  if (absorbing) return;
  absorbing = true;
  process.on('unhandledRejection', function absorbLmdbCommitFailure(reason) {
    const commitError = (reason as { commitError?: Promise<unknown> } | undefined)?.commitError;
    if (commitError !== undefined && typeof commitError.then === 'function') {
      commitError.then(undefined, () => {});
      return;
    }
    if (process.listenerCount('unhandledRejection') === 1) throw reason;
  });
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/** Guards `db`'s write methods (on the instance: lmdb's own calls go through them too). */
export function guardWrites<D extends Database<unknown, string> | RootDatabase>(db: D, space: FreeSpace): D {
  const methods = db as unknown as Record<string, Method>;
  const wrap = (name: string, make: (original: Method) => Method) => {
    const original = methods[name];
    if (typeof original === 'function') methods[name] = make(original);
  };
  const inside = (callback: unknown) =>
    typeof callback !== 'function'
      ? callback
      : function inTransactionCallback(this: unknown, ...args: unknown[]) {
          inTransaction++;
          try {
            return (callback as Method).apply(this, args);
          } finally {
            inTransaction--;
          }
        };
  const landed = (value: unknown) => {
    space.wrote();
    return value;
  };
  const argsOf = (name: string, args: unknown[]) =>
    TRANSACTIONS.has(name) ? [inside(args[0]), ...args.slice(1)] : args;

  for (const name of GROWING_ASYNC)
    wrap(
      name,
      (original) =>
        function guardedAsyncWrite(this: unknown, ...args: unknown[]) {
          if (inTransaction > 0) return original.apply(this, args);
          if (freeing === 0) {
            try {
              assertRoom(space);
            } catch (error) {
              return Promise.reject(error);
            }
          }
          space.wrote();
          const result = original.apply(this, argsOf(name, args));
          return result instanceof Promise ? result.then(landed, answerCommitFailure) : result;
        },
    );
  for (const name of GROWING_SYNC)
    wrap(
      name,
      (original) =>
        function guardedSyncWrite(this: unknown, ...args: unknown[]) {
          if (inTransaction > 0) return original.apply(this, args);
          if (freeing === 0) assertRoom(space);
          space.wrote();
          return original.apply(this, argsOf(name, args));
        },
    );
  for (const name of FREEING)
    wrap(
      name,
      (original) =>
        function freeingWrite(this: unknown, ...args: unknown[]) {
          if (inTransaction > 0) return original.apply(this, args);
          space.wrote();
          const result = freeingSpace(() => original.apply(this, args));
          return result instanceof Promise ? result.then(undefined, answerCommitFailure) : result;
        },
    );
  return db;
}
