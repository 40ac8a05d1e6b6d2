// Thread: main
// The credentials of the open event sockets, so none outlives its UCAN. A revoked key closes every
// socket whose chain holds it (one index key -> sockets), and an expiry closes the sockets whose chain ends then.
// Expiries are whole seconds (UCAN `exp`), so sockets are bucketed by that second and one 1 s sweep, running only
// while a bucket exists, visits the buckets that came due: no timer per socket (a Node timer is ~150 bytes plus a
// heap entry; here a socket costs an entry in each index, see Index).

/** What the watch needs of a socket. */
export interface WatchedSocket {
  readonly identity: {
    /** Revocation keys of the artifact the socket authenticated with and of its proofs (shared with the verification cache). */
    readonly chain: readonly string[];
    /** Seconds since the epoch; absent when nothing in the chain expires. */
    readonly expiration?: number;
  };
}

export type CredentialEnd = 'credential revoked' | 'credential expired';

const SWEEP_MS = 1000;
/**
 * Revocations heard this recently are checked at `add`: a handshake checks revocations before its other awaits
 * (the session's owner), so one revoked meanwhile would otherwise open unnoticed. Longer than any handshake.
 */
const RECENT_MS = 60_000;

export class CredentialWatch<S extends WatchedSocket> {
  readonly #byCid: Index<string, S> = new Map();
  /** Expiry second -> sockets whose credential expires then. */
  readonly #byExpiry: Index<number, S> = new Map();
  /** The last second swept: buckets up to it are gone. */
  #swept = nowSeconds();
  #sweeper: NodeJS.Timeout | undefined;
  /** Key -> when its revocation was heard (rare: kept RECENT_MS, pruned as new ones come). */
  readonly #recent = new Map<string, number>();

  /** `end` closes a socket; the transport's close then calls `remove`. */
  constructor(private readonly end: (socket: S, why: CredentialEnd) => void) {}

  /** Watches the socket; or, when its credential ended already, says why (nothing kept: the caller closes it). */
  add(socket: S): CredentialEnd | undefined {
    const { chain, expiration } = socket.identity;
    if (expiration !== undefined && expiration <= nowSeconds()) return 'credential expired';
    if (chain.some((cid) => this.#recent.has(cid))) return 'credential revoked';
    for (const cid of chain) addTo(this.#byCid, cid, socket);
    if (expiration !== undefined) {
      addTo(this.#byExpiry, dueSecond(expiration), socket);
      this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_MS).unref();
    }
    return undefined;
  }

  remove(socket: S): void {
    const { chain, expiration } = socket.identity;
    for (const cid of chain) removeFrom(this.#byCid, cid, socket);
    if (expiration !== undefined) removeFrom(this.#byExpiry, dueSecond(expiration), socket);
    this.#stopWhenIdle();
  }

  /** A key was revoked: every socket whose chain holds it is closed. */
  revoked(cid: string): void {
    const now = Date.now();
    for (const [old, heardAt] of this.#recent) {
      if (now - heardAt < RECENT_MS) break; // in order of arrival
      this.#recent.delete(old);
    }
    this.#recent.delete(cid);
    this.#recent.set(cid, now);
    for (const socket of socketsAt(this.#byCid, cid)) this.end(socket, 'credential revoked');
  }

  /** Sockets watched (tests, metrics). */
  get size(): { cids: number; expiries: number } {
    return { cids: this.#byCid.size, expiries: this.#byExpiry.size };
  }

  /** Closes everything due: a UCAN is expired once `now >= exp`. */
  #sweep(): void {
    const now = nowSeconds();
    for (let second = this.#swept + 1; second <= now; second++) {
      for (const socket of socketsAt(this.#byExpiry, second)) this.end(socket, 'credential expired');
    }
    this.#swept = now;
    this.#stopWhenIdle();
  }

  #stopWhenIdle(): void {
    if (this.#byExpiry.size > 0 || !this.#sweeper) return;
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    this.#swept = nowSeconds();
  }
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
/** The sweep visits whole seconds; a fractional `exp` (UCAN allows it) is due at the next one. */
const dueSecond = (expiration: number) => Math.ceil(expiration);

/**
 * One socket per key is the common case (an invocation is one socket's), kept bare; a Set only from the second
 * (a Set with its table is ~100 bytes, a quarter of what the watch would otherwise add per socket).
 */
type Index<K, S> = Map<K, S | Set<S>>;

function addTo<K, S extends object>(index: Index<K, S>, key: K, socket: S): void {
  const held = index.get(key);
  if (held === undefined) index.set(key, socket);
  else if (held instanceof Set) held.add(socket);
  else if (held !== socket) index.set(key, new Set([held, socket]));
}

function removeFrom<K, S extends object>(index: Index<K, S>, key: K, socket: S): void {
  const held = index.get(key);
  if (held === socket) index.delete(key);
  else if (held instanceof Set && held.delete(socket) && held.size === 0) index.delete(key);
}

/** A copy: closing a socket removes it from the index meanwhile. */
function socketsAt<K, S extends object>(index: Index<K, S>, key: K): S[] {
  const held = index.get(key);
  return held === undefined ? [] : held instanceof Set ? [...held] : [held];
}
