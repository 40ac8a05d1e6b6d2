// Fixed-window request counter per client (an address; IPv6 by /64). Allow-listed addresses (telecom gateways)
// are exempt.
import { rateLimited } from '../metrics/catalogue.js';
import { rateLimitKey, type AddressList } from './client-address.js';

const refusals = rateLimited.with();

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  allowlist: AddressList;
}

export class RateLimiter {
  #windowStart = Date.now();
  #counts = new Map<string, number>();
  /** BlockList.check allocates on every call; the answer per address never changes: null = exempt. */
  #keys = new Map<string, string | null>();

  constructor(private readonly options: RateLimitOptions) {}

  /** Counts one request; returns 0 when allowed, otherwise the seconds until the window resets. */
  hit(address: string, now = Date.now()): number {
    const { max, windowMs, allowlist } = this.options;
    if (now - this.#windowStart >= windowMs) {
      // A new window: dropping the whole map keeps memory bounded by one window's distinct clients.
      this.#windowStart = now - ((now - this.#windowStart) % windowMs);
      this.#counts = new Map();
    }
    let key = this.#keys.get(address);
    if (key === undefined) {
      if (this.#keys.size > 10_000) this.#keys.clear();
      key = allowlist.has(address) ? null : rateLimitKey(address);
      this.#keys.set(address, key);
    }
    if (key === null) return 0;
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    if (count <= max) return 0;
    refusals.inc();
    return Math.max(1, Math.ceil((this.#windowStart + windowMs - now) / 1000));
  }
}
