// Thread: main
// Identical work in flight at the same time (an upstream call, a UCAN verification, a DID lookup) runs once and every caller gets its result.

export class InFlight<T> {
  readonly #pending = new Map<string, Promise<T>>();

  /** The pending result for `key`, or a new one from `task`. */
  run(key: string, task: () => Promise<T>): Promise<T> {
    const pending = this.#pending.get(key);
    if (pending) return pending;
    const started = (async () => {
      try {
        return await task();
      } finally {
        this.#pending.delete(key);
      }
    })();
    this.#pending.set(key, started);
    return started;
  }
}
