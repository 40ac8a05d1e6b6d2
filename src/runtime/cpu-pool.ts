// Thread: main
// The piscina pool for stateless CPU work that must not block the front door or an actor host.
// Tasks are the named exports of workers/crypto.ts.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';

export class CpuPool {
  readonly #pool: Piscina;

  constructor(options: { maxThreads?: number } = {}) {
    this.#pool = new Piscina({
      filename: new URL('../../workers/crypto.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: options.maxThreads ?? Math.max(1, availableParallelism() - 1),
      idleTimeout: 30_000,
      // A busy thread gets its next task at once, into its own inbox: it starts it as soon as the current one
      // ends instead of waiting for the main thread to hand it over. Under a burst of cold UCAN verifications
      // (one thread on 2 cores) this halved the tasks (bigger batches) and cut the server's CPU per request by
      // 7-23% in paired runs (bench/README.md, session 6). More threads still start once each has two tasks.
      concurrentTasksPerWorker: 2,
    });
  }

  /** Runs the named export of workers/crypto.ts with `payload`. */
  run<T>(taskName: string, payload: unknown, signal?: AbortSignal): Promise<T> {
    return this.#pool.run(payload, { name: taskName, signal });
  }

  get queueSize(): number {
    return this.#pool.queueSize;
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }
}
