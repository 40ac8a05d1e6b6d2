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
