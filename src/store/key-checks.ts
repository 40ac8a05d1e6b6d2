// Thread: main
// Main thread (start-up) and the key tools: what keys a deployment's records were written with, kept beside the
// records so a backup carries them: the PIN key's check value, an unfinished PIN key rotation, the oracle's key DID.
// A port with two implementations: LMDB here (database `key-checks`, single node), JetStream KV in cluster mode
// (src/cluster/key-checks.ts); the composition root picks one.
import type { Store } from './env.js';

/** One record per name: `pin`, `pin-rotation`, `oracle`. */
export interface KeyChecks {
  get<T>(name: string): Promise<T | undefined>;
  /** Writes `value` unless a record exists; answers the record stored afterwards (the other writer's if it came first). */
  putIfAbsent<T>(name: string, value: T): Promise<T>;
  /** Writes `value` whatever was there (synced). */
  put<T>(name: string, value: T): Promise<void>;
  remove(name: string): Promise<void>;
}

export class LmdbKeyChecks implements KeyChecks {
  readonly #db;

  constructor(store: Store) {
    this.#db = store.db<unknown>('key-checks');
  }

  async get<T>(name: string): Promise<T | undefined> {
    return this.#db.get(name) as T | undefined;
  }

  async putIfAbsent<T>(name: string, value: T): Promise<T> {
    return this.#db.transaction(() => {
      const existing = this.#db.get(name);
      if (existing !== undefined) return existing as T;
      this.#db.putSync(name, value);
      return value;
    });
  }

  async put<T>(name: string, value: T): Promise<void> {
    await this.#db.put(name, value);
  }

  async remove(name: string): Promise<void> {
    await this.#db.remove(name);
  }
}
