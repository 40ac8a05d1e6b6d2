// Thread: main
// Verified artifacts by key, until they expire. A Map keeps insertion order, so re-inserting on a hit makes it an
// LRU: the first key is always the least recently used one. A hit on an entry touched within the last quarter of
// `maxEntries` insertions stays where it is (most entries are still ahead of it): a warm request
// then costs one Map lookup, not a delete and a set, and an entry hit at least once per quarter of `maxEntries`
// insertions is still never the one evicted.
interface Entry<V> {
  value: V;
  expiresAtMs: number;
  /** `#tick` when the entry was last (re)inserted. */
  touched: number;
}

export class ExpiringLru<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #recent: number;
  #tick = 0;

  constructor(readonly maxEntries: number) {
    this.#recent = Math.floor(maxEntries / 4);
  }

  get(key: string, nowMs = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= nowMs) {
      this.#entries.delete(key);
      return undefined;
    }
    if (this.#tick - entry.touched > this.#recent) {
      this.#entries.delete(key);
      entry.touched = ++this.#tick;
      this.#entries.set(key, entry);
    }
    return entry.value;
  }

  set(key: string, value: V, expiresAtMs: number): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, expiresAtMs, touched: ++this.#tick });
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
