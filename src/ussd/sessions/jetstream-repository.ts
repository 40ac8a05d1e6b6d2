// Cluster mode (any thread holding a NATS connection): USSD sessions in a replicated JetStream KV bucket,
// `ussd_sessions` (by session ID), whose max age does the expiry instead of a sweeper. Every step of a session
// rewrites its record, so a record is dropped once it went unwritten for the longest a session lives plus a margin
// (clocks of nodes and NATS servers differ); until then, expiry is read from `expiresAt` like the LMDB store does.
// The live set comes from a watch of the bucket kept by each repository (every node sees every node's writes),
// brought up to the bucket's last write before each listing, so a listing includes every write acknowledged before it.
// The watch runs only while the live set is asked for (a listing, a scrape of the gauge) and stops after
// LIVE_IDLE_MS without: every step writes the bucket, and a node following it decodes every step of every node.
import type { ClusterConnection } from '../../cluster/connection.js';
import { KvRecordStore, type RecordChange } from '../../cluster/record-store.js';
import { RevisionConflictError, type Revision, type Versioned } from '../../store/revision.js';
import { ENDED_STATE, type UssdSession } from '../session.js';
import type { LiveSession, UssdSessionRepository } from './repository.js';

/** Kept beyond a session's longest life before the bucket drops it: covers clock differences between machines. */
export const SESSION_BUCKET_MARGIN_MS = 60_000;
/** How long a listing waits for the watch to reach the bucket's last write before it fails. */
const CATCH_UP_TIMEOUT_MS = 5_000;
/** The watch stops when the live set was not asked for this long (longer than any scrape interval). */
export const LIVE_IDLE_MS = 5 * 60_000;

export interface JetStreamUssdSessionOptions {
  /** The longest a session lives after its last write (the session TTL, or an ended session's retention if longer). */
  maxLifetimeMs: number;
  /** Kept beyond that; default SESSION_BUCKET_MARGIN_MS. */
  marginMs?: number;
  /**
   * Keep the live set (a watch of the whole bucket, while it is asked for); default true. The actor hosts only
   * read and write sessions by id and open it with false.
   */
  watchLive?: boolean;
  /** The watch stops after this long without a listing or a count; default LIVE_IDLE_MS. */
  liveIdleMs?: number;
}

export class JetStreamUssdSessionRepository implements UssdSessionRepository {
  /** Session ID -> expiry, for the sessions the watch last saw live; expired ones are forgotten by removeExpired. */
  readonly #live = new Map<string, number>();
  /** The bucket sequence of the last write the watch delivered. */
  #seen = 0;
  #waiters: { sequence: number; resolve: () => void }[] = [];
  /** The running watch (started on the first listing or count), and when the live set was last asked for. */
  #watch: Promise<{ stop(): void }> | undefined;
  #lastAsked = 0;
  #idleCheck: NodeJS.Timeout | undefined;

  private constructor(
    private readonly connection: ClusterConnection,
    private readonly sessions: KvRecordStore<UssdSession>,
    /** undefined: opened without the live set. */
    private readonly liveIdleMs: number | undefined,
  ) {}

  static async open(
    connection: ClusterConnection,
    options: JetStreamUssdSessionOptions,
  ): Promise<JetStreamUssdSessionRepository> {
    const ttlMs = options.maxLifetimeMs + (options.marginMs ?? SESSION_BUCKET_MARGIN_MS);
    const sessions = await KvRecordStore.open<UssdSession>(connection, { name: 'ussd_sessions', ttlMs });
    await keepAtLeast(connection, sessions.bucket, ttlMs);
    return new JetStreamUssdSessionRepository(
      connection,
      sessions,
      options.watchLive === false ? undefined : (options.liveIdleMs ?? LIVE_IDLE_MS),
    );
  }

  get(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return this.sessions.get([sessionId]);
  }

  async begin(session: UssdSession, now: number): Promise<Revision> {
    const key = [session.sessionId];
    // One read: the key's newest write (a deletion included) is what a create expects, so create reads no more.
    const latest = await this.sessions.latest(key);
    if (latest?.value === undefined) return this.sessions.create(key, session, latest ?? null);
    if (latest.value.expiresAt > now) throw new RevisionConflictError(session.sessionId, undefined);
    return this.sessions.update(key, session, latest.revision);
  }

  update(session: UssdSession, read: Versioned<UssdSession>): Promise<Revision> {
    return this.sessions.update([session.sessionId], session, read.revision);
  }

  async live(now: number): Promise<LiveSession[]> {
    await this.#watching();
    await this.#caughtUp();
    const live: LiveSession[] = [];
    for (const [sessionId, expiresAt] of this.#live) if (expiresAt > now) live.push({ sessionId, expiresAt });
    return live;
  }

  /**
   * Live sessions as the watch last saw them (no catch-up: for a gauge read at scrape time). The first count after
   * the watch was idle starts it and answers what it delivered so far (0 at once): the next scrape has them all.
   */
  liveCount(now: number): number {
    this.#watching().catch(() => {}); // a failed start is retried by the next count or listing
    let count = 0;
    for (const expiresAt of this.#live.values()) if (expiresAt > now) count++;
    return count;
  }

  /** The bucket's max age removes expired records; this only forgets them in the live set. Answers 0. */
  async removeExpired(now: number): Promise<number> {
    for (const [sessionId, expiresAt] of this.#live) if (expiresAt <= now) this.#live.delete(sessionId);
    return 0;
  }

  /** Whether the live set's watch runs now. */
  get watching(): boolean {
    return this.#watch !== undefined;
  }

  /** Stops the watch. */
  close(): void {
    this.#stopWatching();
  }

  /** Starts the watch unless it runs, and notes that the live set was asked for. */
  #watching(): Promise<unknown> {
    if (this.liveIdleMs === undefined) {
      return Promise.reject(
        new Error('this USSD session repository was opened without the live set (watchLive: false)'),
      );
    }
    this.#lastAsked = Date.now();
    if (this.#watch) return this.#watch;
    const watch = this.sessions.watch([], (change) => this.#watch === watch && this.#saw(change));
    this.#watch = watch;
    watch.catch(() => this.#watch === watch && this.#stopWatching());
    const idleMs = this.liveIdleMs;
    this.#idleCheck = setInterval(() => Date.now() - this.#lastAsked >= idleMs && this.#stopWatching(), idleMs / 4);
    this.#idleCheck.unref();
    return watch;
  }

  /** Stops the watch and forgets what it saw: the next one starts from the bucket's records again. */
  #stopWatching(): void {
    clearInterval(this.#idleCheck);
    void this.#watch?.then(
      (watch) => watch.stop(),
      () => {},
    );
    this.#watch = undefined;
    this.#live.clear();
    this.#seen = 0;
  }

  #saw({ key, value, revision }: RecordChange<UssdSession>): void {
    const [sessionId] = key;
    if (value !== undefined && value.state !== ENDED_STATE) this.#live.set(sessionId, value.expiresAt);
    else this.#live.delete(sessionId);
    this.#seen = Math.max(this.#seen, revision);
    this.#waiters = this.#waiters.filter((waiter) =>
      waiter.sequence <= this.#seen ? (waiter.resolve(), false) : true,
    );
  }

  /** Resolves once the watch delivered every write the bucket held when this was called. */
  async #caughtUp(): Promise<void> {
    const { state } = await this.connection.jsm.streams.info(`KV_${this.sessions.bucket}`);
    // Max age removes the oldest writes first: when it removed the last one, the bucket is empty.
    if (state.messages === 0 || state.last_seq <= this.#seen) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`USSD session watch did not reach write ${state.last_seq} in time`)),
        CATCH_UP_TIMEOUT_MS,
      );
      this.#waiters.push({ sequence: state.last_seq, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

/** A bucket created earlier with a shorter max age (a longer session TTL configured since) gets the longer one. */
async function keepAtLeast(connection: ClusterConnection, bucket: string, ttlMs: number): Promise<void> {
  const stream = `KV_${bucket}`;
  const { config } = await connection.jsm.streams.info(stream);
  const maxAgeNs = ttlMs * 1_000_000;
  if (config.max_age >= maxAgeNs) return;
  await connection.jsm.streams.update(stream, { max_age: maxAgeNs });
}
