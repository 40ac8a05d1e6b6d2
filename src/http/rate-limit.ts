// Fixed-window request counter per client (an address; IPv6 by /64). Allow-listed addresses (telecom gateways)
// are exempt. In cluster mode the front door asks the count shared by every node instead (SharedCountWithFallback;
// learntRefusals for Socket.IO handshakes, whose admission is synchronous).
import type { Logger } from '../log.js';
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

/** A count kept outside this process (cluster mode: src/cluster/rate-limit.ts): 0 when allowed, else the seconds to wait. */
export type SharedRateLimit = (address: string) => Promise<number>;

/** After a failure of the shared count, this node counts alone for this long before asking it again. */
const FALLBACK_MS = 10_000;

/**
 * The shared count, or this node's own when the shared one cannot be had (NATS down, or slower than the JetStream
 * call timeout). Fails open to the local limit rather than closed: refusing every request while NATS is away
 * would turn an outage of the limiter into an outage of every route, and the local count still holds each client
 * to RATE_LIMIT_MAX per node and window (at most the node count times the limit, for the outage's duration).
 * After a failure the shared count is left alone for FALLBACK_MS, so during an outage requests (and /health) do
 * not each wait for a JetStream timeout, and the outage is logged once per period, not once per request.
 */
export class SharedCountWithFallback {
  #aloneUntil = -Infinity;
  /** rateLimitKey -> epoch ms until which the shared count said the client's window is full (see refusedFor). */
  readonly #refusedUntil = new Map<string, number>();

  constructor(
    private readonly shared: SharedRateLimit,
    private readonly local: RateLimiter,
    private readonly log: Logger,
    private readonly now = Date.now,
  ) {}

  /** Counts one request (HTTP, native WebSocket handshake): the shared count's answer, or the local count's. */
  hit(address: string): Promise<number> {
    return this.#ask(address, () => this.local.hit(address)).then((answer) => {
      if (answer.shared && answer.wait > 0) refusals.inc();
      return answer.wait;
    });
  }

  /**
   * Counts a hit the local count has already admitted (a Socket.IO handshake) in the shared count, or nowhere
   * when it cannot be had (the local count, which has this hit, stands alone then).
   */
  record(address: string): void {
    void this.#ask(address, () => 0);
  }

  /** The seconds this node's last answer from the shared count said the client must wait (0: none known). */
  refusedFor(address: string): number {
    const key = rateLimitKey(address);
    const until = this.#refusedUntil.get(key);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return Math.ceil(left / 1000);
    this.#refusedUntil.delete(key);
    return 0;
  }

  #ask(address: string, alone: () => number): Promise<{ wait: number; shared: boolean }> {
    const askedAt = this.now();
    if (askedAt < this.#aloneUntil) return Promise.resolve({ wait: alone(), shared: false });
    return this.shared(address).then(
      (wait) => {
        if (wait > 0) this.#learn(rateLimitKey(address), askedAt + wait * 1000);
        return { wait, shared: true };
      },
      (err: unknown) => {
        if (this.now() >= this.#aloneUntil) this.log.warn({ err, retryInMs: FALLBACK_MS }, 'cluster rate limit unavailable: counting on this node alone');
        this.#aloneUntil = this.now() + FALLBACK_MS;
        return { wait: alone(), shared: false };
      },
    );
  }

  #learn(key: string, until: number): void {
    if (this.#refusedUntil.size >= 10_000) {
      // Bounded memory: a refusal past its time is worth nothing.
      const now = this.now();
      for (const [other, otherUntil] of this.#refusedUntil) if (otherUntil <= now) this.#refusedUntil.delete(other);
    }
    this.#refusedUntil.set(key, Math.max(until, this.#refusedUntil.get(key) ?? 0));
  }
}

/**
 * The synchronous admission of Socket.IO handshakes in cluster mode. Engine.IO needs the uWS request before its
 * handler returns, so the shared count cannot be awaited: a handshake is decided by this node's own count and by
 * a refusal learnt from the shared count. Each admitted handshake is also counted there (asynchronously); once
 * that count answers this node (for any request of the client) that the client's window is full, this node
 * refuses the client's handshakes at once until the window resets. So a client gets RATE_LIMIT_MAX handshakes
 * over all nodes, plus on each node those admitted while its shared count was behind (the counter's latency times
 * the client's rate), and never more than RATE_LIMIT_MAX per node (docs/cluster.md, "Rate limit across nodes").
 */
export function learntRefusals(local: RateLimiter, shared: SharedCountWithFallback): (address: string) => number {
  return (address) => {
    const learnt = shared.refusedFor(address);
    if (learnt > 0) {
      refusals.inc();
      return learnt;
    }
    const wait = local.hit(address);
    if (wait === 0) shared.record(address);
    return wait;
  };
}
