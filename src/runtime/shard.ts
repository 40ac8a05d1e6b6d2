// Thread: any
/** FNV-1a: a stable hash so every request of a session reaches the same actor host. */
export function shardOf(actorId: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < actorId.length; i++) {
    hash ^= actorId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}
