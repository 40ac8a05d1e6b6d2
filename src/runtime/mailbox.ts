/** Runs tasks one at a time, in arrival order: an actor's state needs no locks. */
export class Mailbox {
  #tail: Promise<unknown> = Promise.resolve();
  #pending = 0;

  get pending(): number {
    return this.#pending;
  }

  post<T>(task: () => Promise<T> | T): Promise<T> {
    this.#pending++;
    const run = async () => {
      try {
        return await task();
      } finally {
        this.#pending--;
      }
    };
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
