// Cluster mode (any thread holding a NATS connection): USSD sessions in a replicated JetStream KV bucket,
// `ussd_sessions` (by session ID), whose max age does the expiry instead of a sweeper. Every step of a session
// rewrites its record, so a record is dropped once it went unwritten for the longest a session lives plus a margin
// (clocks of nodes and NATS servers differ); until then, expiry is read from `expiresAt` like the LMDB store does.
// The live set comes from a watch of the bucket kept by each repository (every node sees every node's writes),
// brought up to the bucket's last write before each listing, so a listing includes every write acknowledged before it.
// Every write carries its session's expiry (or "ended") in a header and the watch asks for headers only, so the
// nodes following the bucket neither receive nor decode the session records written on every step.
import type { ClusterConnection } from '../../cluster/connection.js';
import { KvRecordStore, type SummaryChange } from '../../cluster/record-store.js';
import { RevisionConflictError, type Revision, type Versioned } from '../../store/revision.js';
import { ENDED_STATE, type UssdSession } from '../session.js';
import type { LiveSession, UssdSessionRepository } from './repository.js';

/** Kept beyond a session's longest life before the bucket drops it: covers clock differences between machines. */
export const SESSION_BUCKET_MARGIN_MS = 60_000;
/** How long a listing waits for the watch to reach the bucket's last write before it fails. */
const CATCH_UP_TIMEOUT_MS = 5_000;

export interface JetStreamUssdSessionOptions {
  /** The longest a session lives after its last write (the session TTL, or an ended session's retention if longer). */
  maxLifetimeMs: number;
  /** Kept beyond that; default SESSION_BUCKET_MARGIN_MS. */
  marginMs?: number;
  /**
   * Keep the live set (a watch of the whole bucket); default true. The actor hosts only read and write sessions
   * by id and open it with false: every host of every node watching every write would cost more than it serves.
   */
  watchLive?: boolean;
}

export class JetStreamUssdSessionRepository implements UssdSessionRepository {
  /** Session ID -> expiry, for the sessions the watch last saw live; expired ones are forgotten by removeExpired. */
  readonly #live = new Map<string, number>();
  /** The bucket sequence of the last write the watch delivered. */
  #seen = 0;
  #waiters: { sequence: number; resolve: () => void }[] = [];
  #stopWatch = () => {};
  #watching = false;

  private constructor(
    private readonly connection: ClusterConnection,
    private readonly sessions: KvRecordStore<UssdSession>,
    private readonly maxLifetimeMs: number,
  ) {}

  static async open(connection: ClusterConnection, options: JetStreamUssdSessionOptions): Promise<JetStreamUssdSessionRepository> {
    const ttlMs = options.maxLifetimeMs + (options.marginMs ?? SESSION_BUCKET_MARGIN_MS);
    const sessions = await KvRecordStore.open<UssdSession>(connection, { name: 'ussd_sessions', ttlMs, summary: liveSummary });
    await keepAtLeast(connection, sessions.bucket, ttlMs);
    const repository = new JetStreamUssdSessionRepository(connection, sessions, options.maxLifetimeMs);
    if (options.watchLive === false) return repository;
    repository.#watching = true;
    const watch = await sessions.watchSummaries([], (change) => repository.#saw(change));
    repository.#stopWatch = () => watch.stop();
    return repository;
  }

  get(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return this.sessions.get([sessionId]);
  }

  async begin(session: UssdSession, now: number): Promise<Revision> {
    const key = [session.sessionId];
    const current = await this.sessions.get(key);
    if (current && current.value.expiresAt > now) throw new RevisionConflictError(session.sessionId, undefined);
    return current ? this.sessions.update(key, session, current.revision) : this.sessions.create(key, session);
  }

  update(session: UssdSession, expected: Revision): Promise<Revision> {
    return this.sessions.update([session.sessionId], session, expected);
  }

  async live(now: number): Promise<LiveSession[]> {
    if (!this.#watching) throw new Error('this USSD session repository was opened without the live set (watchLive: false)');
    await this.#caughtUp();
    const live: LiveSession[] = [];
    for (const [sessionId, expiresAt] of this.#live) if (expiresAt > now) live.push({ sessionId, expiresAt });
    return live;
  }

  /** Live sessions as the watch last saw them (no catch-up: for a gauge read at scrape time). */
  liveCount(now: number): number {
    let count = 0;
    for (const expiresAt of this.#live.values()) if (expiresAt > now) count++;
    return count;
  }

  /** The bucket's max age removes expired records; this only forgets them in the live set. Answers 0. */
  async removeExpired(now: number): Promise<number> {
    for (const [sessionId, expiresAt] of this.#live) if (expiresAt <= now) this.#live.delete(sessionId);
    return 0;
  }

  /** Stops the watch. */
  close(): void {
    this.#stopWatch();
  }

  #saw({ key, summary, deleted, revision, writtenAt }: SummaryChange): void {
    const [sessionId] = key;
    // A write without the header (none is made by this version) counts as live for the longest a session lives.
    const expiresAt = deleted || summary === ENDED_SUMMARY ? undefined : summary === undefined ? writtenAt + this.maxLifetimeMs : Number(summary);
    if (expiresAt !== undefined) this.#live.set(sessionId, expiresAt);
    else this.#live.delete(sessionId);
    this.#seen = Math.max(this.#seen, revision);
    this.#waiters = this.#waiters.filter((waiter) => (waiter.sequence <= this.#seen ? (waiter.resolve(), false) : true));
  }

  /** Resolves once the watch delivered every write the bucket held when this was called. */
  async #caughtUp(): Promise<void> {
    const { state } = await this.connection.jsm.streams.info(`KV_${this.sessions.bucket}`);
    // Max age removes the oldest writes first: when it removed the last one, the bucket is empty.
    if (state.messages === 0 || state.last_seq <= this.#seen) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`USSD session watch did not reach write ${state.last_seq} in time`)), CATCH_UP_TIMEOUT_MS);
      this.#waiters.push({ sequence: state.last_seq, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

const ENDED_SUMMARY = 'ended';

/** What the live set needs of a session, in a header of its every write: its expiry, or that it ended. */
const liveSummary = (session: UssdSession) => (session.state === ENDED_STATE ? ENDED_SUMMARY : String(session.expiresAt));

/** A bucket created earlier with a shorter max age (a longer session TTL configured since) gets the longer one. */
async function keepAtLeast(connection: ClusterConnection, bucket: string, ttlMs: number): Promise<void> {
  const stream = `KV_${bucket}`;
  const { config } = await connection.jsm.streams.info(stream);
  const maxAgeNs = ttlMs * 1_000_000;
  if (config.max_age >= maxAgeNs) return;
  await connection.jsm.streams.update(stream, { max_age: maxAgeNs });
}
