// Thread: any (ground floor)
// The one bound on the memos a client can fill (addresses, DIDs, keys, query strings):
// past `limit` keys the oldest goes first. Insertion order only (a hit does not move its key), so a hit costs one
// Map lookup and an insert at most one more delete; memory stays bounded against a client sending endless new keys.
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`BoundedMap limit must be at least 1, not ${limit}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Sets `key`; a new key past the limit first drops the oldest one. */
  set(key: K, value: V): this {
    const entries = this.#entries;
    if (entries.size >= this.limit && !entries.has(key)) entries.delete(entries.keys().next().value as K);
    entries.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
