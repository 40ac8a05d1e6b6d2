// Thread: any
// Which node owns which partition. Sessions hash to N partitions; ownership is a record per
// partition in a replicated KV bucket, valid while its owner's node lease (a heartbeat record it renews) is alive.
// Every node watches the bucket, so every node knows every owner. Balance: each live node aims at its share
// (N / live nodes, the remainder to the first ids in order), gives back what is over it and claims free partitions
// or those of nodes whose lease lapsed. Every claim and release is a revision-checked write: two nodes racing for
// one partition cannot both win.
//
// Why a lease per node and not per partition: renewing N partition records every second would cost N quorum writes
// per second; a node heartbeat costs one, and partition records change only when ownership moves.
//
// Time: a node counts another's lease from the moment it *saw* its latest heartbeat (its own monotonic clock), so
// clocks never need to agree. A node stops owning anything when its own last successful renewal was *sent* more
// than a lease ago, which is never later than when the others start taking over.
import { EventEmitter } from 'node:events';
import { shardOf } from '../runtime/shard.js';
import type { ClusterConnection } from './connection.js';
import { isRevisionConflict } from '../store/revision.js';
import { KvRecordStore, type RecordChange } from './record-store.js';
import { isLinkAddress, type LinkAddress } from './node-link/wire.js';

export interface PartitionLeaseOptions {
  nodeId: string;
  /** Number of partitions (every node must agree). */
  partitions?: number;
  /** A node whose heartbeat was not seen for this long is dead; its partitions are taken over. */
  leaseTtlMs?: number;
  /** Bucket name after the deployment prefix. */
  bucket?: string;
  /** Where this node's link listens (node-link/): carried in its heartbeat, so that callers can reach it. */
  link?: LinkAddress;
}

type LeaseRecord = { node: string; renewedAt: number; link?: LinkAddress } | { owner: string | null };

interface NodeLease {
  revision: number;
  /** performance.now() when this node last saw a heartbeat of it. */
  seenAt: number;
  link?: LinkAddress;
}

interface PartitionRecord {
  owner: string | null;
  revision: number;
}

export const DEFAULT_PARTITIONS = 128;
export const DEFAULT_LEASE_TTL_MS = 3_000;

/** The partition of a session: the same stable FNV-1a hash that picks its actor host on a node. */
export const partitionOf: (sessionKey: string, partitions: number) => number = shardOf;

/** Attempts at the first heartbeat before start-up fails (each bounded by the NATS request timeout). */
const START_ATTEMPTS = 4;

/** The share of `partitions` for `nodeId` among `live` nodes (sorted): equal parts, the remainder to the first. */
export function shareOf(nodeId: string, live: readonly string[], partitions: number): number {
  const index = live.indexOf(nodeId);
  if (index < 0) return 0;
  return Math.floor(partitions / live.length) + (index < partitions % live.length ? 1 : 0);
}

interface LeaseEvents {
  /** This node's owned set changed. */
  change: [owned: ReadonlySet<number>];
  /** The lease table changed (any node's heartbeat or any partition's owner, as the watch delivered it). */
  table: [];
  /** This node took these partitions from an owner whose lease lapsed (it died, or lost NATS): work it left. */
  inherited: [partitions: ReadonlySet<number>];
  /** This node took these partitions, however: free, handed over cleanly, or inherited (also told `inherited`). */
  claimed: [partitions: ReadonlySet<number>];
}

export class PartitionLeases extends EventEmitter<LeaseEvents> {
  readonly nodeId: string;
  readonly partitions: number;
  readonly leaseTtlMs: number;
  readonly #link: LinkAddress | undefined;
  readonly #nodes = new Map<string, NodeLease>();
  readonly #parts = new Map<number, PartitionRecord>();
  /** Partitions this node is giving back: not served from the moment the release is decided. */
  readonly #releasing = new Set<number>();
  #owned: ReadonlySet<number> = new Set();
  #heartbeatRevision = 0;
  /** performance.now() when the last acknowledged heartbeat was sent (0 = never). */
  #renewedAt = 0;
  #ready = false;
  #stopped = false;
  #reconciling: Promise<void> | undefined;
  #again = false;
  #timers: NodeJS.Timeout[] = [];
  #watch: { stop(): void } | undefined;
  /** Highest bucket revision the watch delivered. */
  #watched = 0;
  #caughtUp: (() => void) | undefined;

  private constructor(
    private readonly store: KvRecordStore<LeaseRecord>,
    options: PartitionLeaseOptions,
  ) {
    super();
    this.nodeId = options.nodeId;
    this.partitions = options.partitions ?? DEFAULT_PARTITIONS;
    this.leaseTtlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    this.#link = options.link;
  }

  /** Joins: heartbeat, watch, then claims a share. Resolves once this node has seen the whole lease table. */
  static async join(connection: ClusterConnection, options: PartitionLeaseOptions): Promise<PartitionLeases> {
    const store = await KvRecordStore.open<LeaseRecord>(connection, { name: options.bucket ?? 'leases' });
    const leases = new PartitionLeases(store, options);
    await leases.#start();
    // A node that lost its connection for good must not keep renewing timers.
    void connection.nc.closed().then(() => leases.#halt());
    return leases;
  }

  /** Partitions this node serves now. */
  get owned(): ReadonlySet<number> {
    return this.#owned;
  }

  /**
   * Whether this node serves `partition` now. Its own lease is checked on the spot, not only at the periodic
   * recount: a node resuming after a pause (SIGSTOP, a long GC, a VM freeze) may run callbacks before its timers,
   * and must not serve a partition the others may have taken over meanwhile.
   */
  owns(partition: number): boolean {
    return this.#owned.has(partition) && this.#isLive(this.nodeId, performance.now());
  }

  /** The node the table names for a partition (undefined while it is free or its owner's lease lapsed). */
  ownerOf(partition: number): string | undefined {
    const owner = this.#parts.get(partition)?.owner;
    return owner && this.#isLive(owner, performance.now()) ? owner : undefined;
  }

  /** Where `nodeId`'s link listens, as its latest heartbeat said (undefined: it has none; call it through NATS). */
  linkOf(nodeId: string): LinkAddress | undefined {
    return this.#nodes.get(nodeId)?.link;
  }

  /** Whether `nodeId`'s lease is current as this node sees it. */
  isLive(nodeId: string): boolean {
    return this.#isLive(nodeId, performance.now());
  }

  /** Live nodes as this node sees them, sorted. */
  liveNodes(): string[] {
    const now = performance.now();
    return [...this.#nodes.keys()].filter((id) => this.#isLive(id, now)).sort();
  }

  /** Leaves cleanly: gives every partition back and removes the heartbeat, so the others take over at once. */
  async leave(): Promise<void> {
    if (this.#stopped) return;
    const mine = [...this.#owned];
    this.#halt();
    this.#renewedAt = 0;
    this.#publish();
    await Promise.allSettled(mine.map((p) => this.#setOwner(p, null)));
    await this.store.delete(['node', this.nodeId], this.#heartbeatRevision).catch(() => undefined);
  }

  async #start(): Promise<void> {
    this.#watch = await this.store.watch([], (change) => this.#apply(change));
    // Nodes joining a new bucket at the same moment can see their first writes time out (nats-server 2.9 leaves
    // some of several concurrent requests on a new stream unanswered until the request timeout): a few attempts.
    for (let attempt = 0; attempt < START_ATTEMPTS && !this.#renewedAt && !this.#stopped; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      await this.#renew();
    }
    if (!this.#renewedAt) throw new Error(`node ${this.nodeId} could not write its lease`);
    // The watch delivers the bucket in order: once it reached this heartbeat, everything before it was seen too.
    const heartbeat = this.#heartbeatRevision;
    if (this.#watched < heartbeat) {
      await new Promise<void>((resolve) => (this.#caughtUp = () => this.#watched >= heartbeat && resolve()));
    }
    this.#ready = true;
    const renewEvery = Math.max(50, Math.floor(this.leaseTtlMs / 3));
    this.#timers.push(setInterval(() => void this.#renew(), renewEvery));
    // Expiry is judged locally: look often enough that a lapsed lease is acted on within a tenth of the TTL.
    this.#timers.push(setInterval(() => this.#reconcileSoon(), Math.max(25, Math.floor(this.leaseTtlMs / 10))));
    this.#reconcileSoon();
  }

  #halt(): void {
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    this.#watch?.stop();
    this.#publish();
  }

  #isLive(nodeId: string, now: number): boolean {
    if (nodeId === this.nodeId) return this.#renewedAt > 0 && now - this.#renewedAt < this.leaseTtlMs;
    const lease = this.#nodes.get(nodeId);
    return lease !== undefined && now - lease.seenAt < this.leaseTtlMs;
  }

  async #renew(): Promise<void> {
    if (this.#stopped) return;
    const sentAt = performance.now();
    const key = ['node', this.nodeId];
    const value = { node: this.nodeId, renewedAt: Date.now(), ...(this.#link ? { link: this.#link } : {}) };
    try {
      this.#heartbeatRevision = this.#heartbeatRevision
        ? await this.store.update(key, value, this.#heartbeatRevision)
        : await this.store.create(key, value);
      // Back after a lapse (NATS unreachable, or the bucket electing a leader): nobody's heartbeat could be seen
      // meanwhile, so everyone's lease counts from now instead of being taken for dead.
      if (sentAt - this.#renewedAt >= this.leaseTtlMs) for (const lease of this.#nodes.values()) lease.seenAt = sentAt;
      this.#renewedAt = sentAt;
    } catch (error) {
      if (!isRevisionConflict(error)) return; // NATS unreachable: the lease lapses, ownership with it
      // Someone else wrote this node's heartbeat: a survivor declared it dead, or it restarted with the same id.
      // Continue from the current record; partitions taken meanwhile show up through the watch.
      const current = await this.store.get(key).catch(() => undefined);
      this.#heartbeatRevision = current?.revision ?? 0;
    }
    this.#publish();
  }

  #apply(change: RecordChange<LeaseRecord>): void {
    const [kind, id] = change.key;
    this.#watched = Math.max(this.#watched, change.revision);
    this.#caughtUp?.();
    if (kind === 'node') {
      if (change.value) {
        const link = 'link' in change.value && isLinkAddress(change.value.link) ? change.value.link : undefined;
        this.#nodes.set(id, { revision: change.revision, seenAt: performance.now(), link });
      } else this.#nodes.delete(id);
    } else if (kind === 'partition') {
      const owner = change.value && 'owner' in change.value ? change.value.owner : null;
      this.#record(Number(id), owner, change.revision);
    }
    this.#publish();
    this.emit('table');
    this.#reconcileSoon();
  }

  /** Keeps the newest revision per partition: an acknowledged write and its watch event may arrive in either order. */
  #record(partition: number, owner: string | null, revision: number): void {
    const known = this.#parts.get(partition);
    if (!known || known.revision < revision) this.#parts.set(partition, { owner, revision });
  }

  /** Recomputes the owned set and tells listeners when it changed. */
  #publish(): void {
    const now = performance.now();
    const owned = new Set<number>();
    if (!this.#stopped && this.#isLive(this.nodeId, now)) {
      for (const [partition, record] of this.#parts) {
        if (record.owner === this.nodeId && !this.#releasing.has(partition)) owned.add(partition);
      }
    }
    const changed = owned.size !== this.#owned.size || [...owned].some((p) => !this.#owned.has(p));
    this.#owned = owned;
    if (changed) this.emit('change', owned);
  }

  #reconcileSoon(): void {
    if (!this.#ready || this.#stopped) return;
    if (this.#reconciling) {
      this.#again = true;
      return;
    }
    this.#reconciling = this.#reconcile()
      .catch(() => undefined) // a failed write is retried on the next tick or event
      .finally(() => {
        this.#reconciling = undefined;
        if (this.#again) {
          this.#again = false;
          this.#reconcileSoon();
        }
      });
  }

  async #reconcile(): Promise<void> {
    const now = performance.now();
    this.#publish();
    if (!this.#isLive(this.nodeId, now)) return;
    const live = this.liveNodes();
    const target = shareOf(this.nodeId, live, this.partitions);
    const mine = [...this.#owned].sort((a, b) => a - b);
    const writes: Promise<unknown>[] = [];
    const orphaned: number[] = [];
    const claims: number[] = [];
    // Heartbeats of nodes gone for ten leases are removed (revision-checked: not one that came back), so node ids
    // that never return (a container's random hostname) do not pile up. Their partitions are free either way.
    for (const [id, lease] of this.#nodes) {
      if (now - lease.seenAt > 10 * this.leaseTtlMs)
        writes.push(this.store.delete(['node', id], lease.revision).catch(() => undefined));
    }
    if (mine.length > target) {
      // Give back the highest-numbered ones; stop serving them before the table says so.
      for (const partition of mine.slice(target)) {
        this.#releasing.add(partition);
        writes.push(this.#setOwner(partition, null).finally(() => this.#releasing.delete(partition)));
      }
      this.#publish();
    } else if (mine.length < target) {
      const free: number[] = [];
      for (let p = 0; p < this.partitions; p++) {
        const owner = this.#parts.get(p)?.owner;
        if (!owner || (owner !== this.nodeId && !this.#isLive(owner, now))) free.push(p);
      }
      // Start at a node-specific place so nodes claiming at once mostly pick different partitions.
      const offset = partitionOf(this.nodeId, Math.max(1, free.length));
      const picks = [...free.slice(offset), ...free.slice(0, offset)].slice(0, target - mine.length);
      // Those a lapsed node still held: the work it left there is this node's now (told once the claims are in).
      for (const partition of picks) if (this.#parts.get(partition)?.owner) orphaned.push(partition);
      for (const partition of picks) writes.push(this.#setOwner(partition, this.nodeId));
      claims.push(...picks);
    }
    await Promise.allSettled(writes);
    this.#publish();
    const inherited = new Set(orphaned.filter((partition) => this.#owned.has(partition)));
    if (inherited.size > 0) this.emit('inherited', inherited);
    const claimed = new Set(claims.filter((partition) => this.#owned.has(partition)));
    if (claimed.size > 0) this.emit('claimed', claimed);
  }

  /** A revision-checked write of a partition's owner; losing a race is normal (the watch brings the winner). */
  async #setOwner(partition: number, owner: string | null): Promise<void> {
    const key = ['partition', String(partition)];
    const known = this.#parts.get(partition);
    try {
      const revision = known
        ? await this.store.update(key, { owner }, known.revision)
        : await this.store.create(key, { owner });
      this.#record(partition, owner, revision);
    } catch (error) {
      if (!isRevisionConflict(error)) throw error;
    }
  }
}
