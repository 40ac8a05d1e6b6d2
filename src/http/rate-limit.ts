// Thread: main
// Fixed-window request counter per client (an address; IPv6 by /64). Allow-listed addresses (telecom gateways)
// are exempt. In cluster mode the front door asks the count shared by every node instead (withLocalFallback).
import type { Logger } from '../base/log.js';
import { rateLimited } from '../metrics/catalogue.js';
import { rateLimitKey, type AddressList } from './client-address.js';
import { BoundedMap } from '../base/bounded-map.js';
import { within } from '../base/within.js';

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
  readonly #keys = new BoundedMap<string, string | null>(10_000);

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

/** A count kept outside this process (cluster mode: src/cluster/rate-limit.ts): 0 when allowed, else the seconds to wait. */
export type SharedRateLimit = (address: string) => Promise<number>;

/** After a failure of the shared count, this node counts alone for this long before asking it again. */
const FALLBACK_MS = 10_000;
/**
 * How long a request waits for the shared count before it counts on this node (a quorum write takes milliseconds;
 * without this bound a request waited for the JetStream call timeout, 5 s, whenever NATS was gone or electing).
 */
const SHARED_WAIT_MS = 1_000;

/**
 * The shared count, or this node's own when the shared one cannot be had within SHARED_WAIT_MS (NATS down or
 * electing). Fails open to the local limit rather than closed: refusing every request while NATS is away would turn
 * an outage of the limiter into an outage of every route, and the local count still holds each client to
 * RATE_LIMIT_MAX per node and window (at most the node count times the limit, for the outage's duration).
 * After a failure the shared count is left alone for FALLBACK_MS, then one request asks it again while the others
 * go on counting locally, so during an outage no request but that one waits, and the outage is logged once per
 * period, not once per request.
 */
export function withLocalFallback(
  shared: SharedRateLimit,
  local: RateLimiter,
  log: Logger,
  now = Date.now,
  sharedWaitMs = SHARED_WAIT_MS,
): SharedRateLimit {
  let aloneUntil = -Infinity;
  let probing = false;
  return (address) => {
    if (probing || now() < aloneUntil) return Promise.resolve(local.hit(address));
    // After a failure this request is the probe: the others count locally until it is answered.
    probing = aloneUntil > -Infinity;
    return within(shared(address), sharedWaitMs, () => new Error(`no answer within ${sharedWaitMs} ms`)).then(
      (wait) => {
        probing = false;
        aloneUntil = -Infinity;
        if (wait > 0) refusals.inc();
        return wait;
      },
      (err: unknown) => {
        probing = false;
        if (now() >= aloneUntil)
          log.warn({ err, retryInMs: FALLBACK_MS }, 'cluster rate limit unavailable: counting on this node alone');
        aloneUntil = now() + FALLBACK_MS;
        return local.hit(address);
      },
    );
  };
}
