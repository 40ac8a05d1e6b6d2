// Fixed-window request counter per client address. Allow-listed addresses (telecom gateways) are exempt.
import { rateLimited } from '../metrics/catalogue.js';
import type { AddressList } from './client-address.js';

const refusals = rateLimited.with();

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  allowlist: AddressList;
}

export class RateLimiter {
  #windowStart = Date.now();
  #counts = new Map<string, number>();
  /** BlockList.check allocates on every call; the answer per address never changes. */
  #exempt = new Map<string, boolean>();

  constructor(private readonly options: RateLimitOptions) {}

  /** Counts one request; returns 0 when allowed, otherwise the seconds until the window resets. */
  hit(address: string, now = Date.now()): number {
    const { max, windowMs, allowlist } = this.options;
    if (now - this.#windowStart >= windowMs) {
      // A new window: dropping the whole map keeps memory bounded by one window's distinct clients.
      this.#windowStart = now - ((now - this.#windowStart) % windowMs);
      this.#counts = new Map();
    }
    let exempt = this.#exempt.get(address);
    if (exempt === undefined) {
      if (this.#exempt.size > 10_000) this.#exempt.clear();
      exempt = allowlist.has(address);
      this.#exempt.set(address, exempt);
    }
    if (exempt) return 0;
    const count = (this.#counts.get(address) ?? 0) + 1;
    this.#counts.set(address, count);
    if (count <= max) return 0;
    refusals.inc();
    return Math.max(1, Math.ceil((this.#windowStart + windowMs - now) / 1000));
  }
}
