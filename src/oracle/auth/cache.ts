// Verified artifacts by hash, until they expire. A Map keeps insertion order, so re-inserting on a hit
// makes it an LRU: the first key is always the least recently used one.
export class ExpiringLru<V> {
  readonly #entries = new Map<string, { value: V; expiresAtMs: number }>();

  constructor(readonly maxEntries: number) {}

  get(key: string, nowMs = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAtMs <= nowMs) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, expiresAtMs: number): void {
    this.#entries.delete(key);
    while (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, expiresAtMs });
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
