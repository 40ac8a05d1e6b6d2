// Thread: main
// Where signature checks run. The authenticator takes a SignatureVerifier so tests can count calls and the
// server can move the work off the main thread: poolVerifier sends checks to the piscina pool
// (workers/crypto.ts `verifyEd25519Batch`) so the front door never runs Ed25519 itself.
import { verifyEd25519Checks, type SignatureCheck } from './ed25519.js';

export type { SignatureCheck };

/** Checks a batch of signatures; the answer has one boolean per check, in order. */
export type SignatureVerifier = (checks: readonly SignatureCheck[]) => Promise<boolean[]>;

/** The name of the piscina task (a named export of workers/crypto.ts). */
export const VERIFY_TASK = 'verifyEd25519Batch';

/** Anything that runs named tasks of workers/crypto.ts (CpuPool). */
export interface TaskRunner {
  run<T>(taskName: string, payload: unknown): Promise<T>;
}

/** Verifies on the calling thread (tests, tools). */
export function inProcessVerifier(): SignatureVerifier {
  return async function verifyInProcess(checks) {
    return verifyEd25519Checks(checks);
  };
}

/**
 * Verifies in the CPU pool. Checks asked for in the same turn of the event loop (concurrent requests with
 * cold caches) travel together in one task, so a burst costs one thread hop instead of one per signature.
 */
export function poolVerifier(pool: TaskRunner, maxBatch = 64): SignatureVerifier {
  let pending:
    | {
        checks: SignatureCheck[];
        waiters: Array<{ from: number; to: number; resolve: (r: boolean[]) => void; reject: (e: unknown) => void }>;
      }
    | undefined;

  function flush(): void {
    const batch = pending;
    pending = undefined;
    if (!batch) return;
    pool.run<boolean[]>(VERIFY_TASK, batch.checks).then(
      (results) => {
        for (const waiter of batch.waiters) waiter.resolve(results.slice(waiter.from, waiter.to));
      },
      (error: unknown) => {
        for (const waiter of batch.waiters) waiter.reject(error);
      },
    );
  }

  return function verifyInPool(checks) {
    if (checks.length === 0) return Promise.resolve([]);
    return new Promise<boolean[]>((resolve, reject) => {
      if (!pending) {
        pending = { checks: [], waiters: [] };
        setImmediate(flush);
      }
      const from = pending.checks.length;
      // Copies, because a view into a larger buffer (the whole CAR) would be cloned whole across threads.
      for (const c of checks)
        pending.checks.push({ publicKey: c.publicKey.slice(), data: c.data.slice(), signature: c.signature.slice() });
      pending.waiters.push({ from, to: pending.checks.length, resolve, reject });
      if (pending.checks.length >= maxBatch) flush();
    });
  };
}
