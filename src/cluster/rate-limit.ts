// Thread: main
// The fixed-window rate limit held across nodes. One counter record per client and window in a
// replicated KV bucket, raised with revision-checked writes, so three nodes sharing a client's requests grant
// RATE_LIMIT_MAX between them, not three times it. The same client and window key as the single-node limiter
// (src/http/rate-limit.ts): an address, or its /64 for IPv6; allow-listed addresses are exempt.
//
// Hand-written batching (why): every request would otherwise be one quorum write, and concurrent requests of one
// client on one node would mostly lose their compare-and-set to each other. Requests that arrive while a node's
// write for that counter is in flight join the next write, which takes as many as are left in the window.
import { rateLimitKey, type AddressList } from '../http/client-address.js';
import type { ClusterConnection } from './connection.js';
import { backOffAfterConflict, isRevisionConflict } from '../store/revision.js';
import { KvRecordStore } from './record-store.js';

export interface ClusterRateLimitOptions {
  max: number;
  windowSeconds: number;
  allowlist?: AddressList;
}

interface Waiter {
  resolve(retryAfterSeconds: number): void;
  reject(error: unknown): void;
  now: number;
}

/** A write that keeps losing races this many times in a row is a fault, not contention (nodes are few). */
const MAX_ROUNDS = 50;

export class ClusterRateLimiter {
  readonly #queues = new Map<string, Waiter[]>();

  private constructor(
    private readonly store: KvRecordStore<number>,
    private readonly options: ClusterRateLimitOptions,
  ) {}

  /** The bucket is per window length (its records expire after two windows), so changing the window starts afresh. */
  static async open(connection: ClusterConnection, options: ClusterRateLimitOptions): Promise<ClusterRateLimiter> {
    const windowMs = options.windowSeconds * 1000;
    const store = await KvRecordStore.open<number>(connection, {
      name: `ratelimit_${options.windowSeconds}s`,
      ttlMs: 2 * windowMs,
    });
    return new ClusterRateLimiter(store, options);
  }

  /** Counts one request; resolves 0 when allowed, otherwise the seconds until the window resets. */
  hit(address: string, now = Date.now()): Promise<number> {
    if (this.options.allowlist?.has(address)) return Promise.resolve(0);
    const window = Math.floor(now / (this.options.windowSeconds * 1000));
    const counter = `${rateLimitKey(address)}|${window}`;
    return new Promise((resolve, reject) => {
      const queue = this.#queues.get(counter);
      if (queue) return void queue.push({ resolve, reject, now });
      this.#queues.set(counter, [{ resolve, reject, now }]);
      void this.#drain(counter, ['rl', rateLimitKey(address), String(window)], window);
    });
  }

  /** Serves a counter's queue in rounds, one write per round, until no request waits. */
  async #drain(counter: string, key: string[], window: number): Promise<void> {
    const queue = this.#queues.get(counter)!;
    const windowEndMs = (window + 1) * this.options.windowSeconds * 1000;
    while (queue.length > 0) {
      const waiters = queue.splice(0);
      try {
        const granted = await this.#take(key, waiters.length);
        for (const [i, waiter] of waiters.entries()) {
          waiter.resolve(i < granted ? 0 : Math.max(1, Math.ceil((windowEndMs - waiter.now) / 1000)));
        }
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
      }
    }
    this.#queues.delete(counter);
  }

  /** Raises the counter by up to `wanted`, as far as the window allows; returns how many were granted. */
  async #take(key: string[], wanted: number): Promise<number> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const current = await this.store.get(key);
      const count = current?.value ?? 0;
      const granted = Math.min(wanted, this.options.max - count);
      if (granted <= 0) return 0; // full: refusing costs a read, no write
      try {
        if (current) await this.store.update(key, count + granted, current.revision);
        else await this.store.create(key, granted);
        return granted;
      } catch (error) {
        if (!isRevisionConflict(error)) throw error;
        await backOffAfterConflict(round + 1);
      }
    }
    throw new Error(`rate-limit counter ${key.join('/')} lost ${MAX_ROUNDS} writes in a row`);
  }
}
