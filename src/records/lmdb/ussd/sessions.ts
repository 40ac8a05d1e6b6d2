// Thread: any
// USSD sessions in LMDB, in three databases written together in one transaction:
// - `ussd-sessions-by-start`: the records, keyed `<start, 15 digits>:<sessionId>` (the start is the record's
//   createdAt), the revision as LMDB's entry version;
// - `ussd-session-starts`: session ID -> start, to find a record by its session ID;
// - `ussd-session-expiry-index`: key `<bucket, 15 digits>:<start, 15 digits>:<sessionId>`, value LIVE or ENDED, where
//   the bucket is the session's expiry rounded up to a whole minute (see bucketOf).
//
// Why records are keyed by start and not by session ID. Gateways name sessions with random IDs (Africa's Talking:
// `ATUid_` and hex). Keyed by them, the few hundred sessions in progress at any moment sit on as many B-tree leaf
// pages, spread over the whole database, and every step copies and writes its own page: a synced transaction of
// ~30 steps wrote ~30 scattered pages. Keyed by start, sessions in progress are neighbours on a few pages at the
// end of the tree, whatever their IDs; only `ussd-session-starts` takes a random page, once per session when it
// begins. Measured with random IDs (bench/README.md, "Session 8"): 27 -> 16 µs of CPU per step for the commit in a
// standalone loop, and in the bench's USSD row with gateway-shaped IDs, see there.
//
// A write (the actor host's turn commit, store/turn-commit.ts) applies only while the record's version is the one
// the writer read, checked by LMDB inside the transaction; a step that keeps the bucket and the state writes the
// record alone, so most steps write neither the index nor the starts. The sweep and the live listing read only the
// index range they need (expired: buckets up to now's; live: from now's) and the records it names, never the whole
// session database.
//
// Why they stay exact. Invariant: each stored record R has exactly one start entry, R.sessionId -> R.createdAt, and
// exactly one index entry, `<bucketOf(R.expiresAt)>:<R.createdAt>:<id>` with R's state, and there are no other
// entries. Every write keeps it in the transaction that writes the record: begin and update replace the entries of
// the record they replace (the stored one, since the write applies only at its revision) when they change, and the
// sweep removes a record with its entries. Since bucketOf(t) >= t, an entry whose bucket is at or before now names
// an expired session (a live session can never sit in a passed bucket: its step would have moved the entry); and a
// session expired by now has bucketOf(expiresAt) <= bucketOf(now), so the sweep, reading the buckets up to now's and
// each record's exact expiry, finds every expired session, and the live listing, reading the buckets from now's on,
// every live one.
import type { Database } from 'lmdb';
import type { Store } from '../../../store/env.js';
import type { TurnCommit } from '../../../store/turn-commit.js';
import type { Context } from '../../../telemetry/index.js';
import { RevisionConflictError, type Revision, type Stored, type Versioned } from '../../../store/revision.js';
import { ENDED_STATE, isLive, type UssdSession } from '../../../ussd/session.js';
import type { LiveSession, UssdLiveIndex, UssdSessionStore } from '../../../ussd/sessions/repository.js';
import { freeingSpace } from '../../../store/write-guard.js';
import { OUTBOX_DB, putInStep } from './outbox.js';
import type { QueuedNotification } from '../../../ussd/outbox/store.js';

const LIVE = 0;
const ENDED = 1;
type IndexValue = typeof LIVE | typeof ENDED;

/**
 * The width of an expiry bucket. A step moves its session's expiry to now + the TTL (5 minutes by default), so
 * the bucket changes only when a minute boundary passes between two steps of a session: for a caller answering
 * every few seconds, about one step in ten writes the index, and a whole USSD dialogue (at most a few minutes on
 * the networks) moves its entry a handful of times. Wider buckets would save few more writes, but make the sweep
 * and the live listing read more live records in now's bucket (those expiring within the next minute at most).
 * Changing it needs a new index database (a rebuild), as the keys depend on it.
 */
const EXPIRY_BUCKET_MS = 60_000;
/** Expired sessions removed per write transaction, so a large sweep never holds the writer for long. */
const SWEEP_BATCH = 1000;
const TIME_DIGITS = 15;

/** The end of the bucket holding `expiresAt`: a whole minute, at or after it. */
const bucketOf = (expiresAt: number) => Math.ceil(expiresAt / EXPIRY_BUCKET_MS) * EXPIRY_BUCKET_MS;

/** Epoch ms zero-padded, so string order is time order. */
const time = (ms: number) => String(ms).padStart(TIME_DIGITS, '0');

const recordKey = (createdAt: number, sessionId: string) => `${time(createdAt)}:${sessionId}`;
const recordKeyOf = (session: UssdSession) => recordKey(session.createdAt, session.sessionId);

const indexKey = (session: UssdSession) => `${time(bucketOf(session.expiresAt))}:${recordKeyOf(session)}`;
/** The parts of an index key: its bucket, and the key of the record it names. */
const bucketIn = (key: string) => Number(key.slice(0, TIME_DIGITS));
const recordKeyIn = (key: string) => key.slice(TIME_DIGITS + 1);
const sessionIdIn = (key: string) => key.slice(2 * (TIME_DIGITS + 1));
/** The start in a record key. */
const startIn = (recordKey: string) => Number(recordKey.slice(0, TIME_DIGITS));

const indexValue = (session: UssdSession): IndexValue => (session.state === ENDED_STATE ? ENDED : LIVE);

/**
 * lmdb's conditional put inside a transaction (its typings omit this form): stores `value` at `version` and returns
 * true only while the entry's version is `ifVersion`, or, for null, while there is no entry.
 */
type ConditionalPut = (key: string, value: UssdSession, version: number, ifVersion: number | null) => boolean;
/** lmdb's conditional remove (typed for values only): removes the entry only while its version is `ifVersion`. */
type ConditionalRemove = (key: string, ifVersion: number) => boolean;

const isEmpty = (db: Database<unknown, string>) => [...db.getKeys({ limit: 1 })].length === 0;

export class LmdbUssdSessionRepository implements UssdSessionStore, UssdLiveIndex {
  readonly #records: Database<UssdSession, string>;
  readonly #starts: Database<number, string>;
  readonly #index: Database<IndexValue, string>;
  readonly #turn: TurnCommit;
  /** The notifications a step leaves, written in its transaction (outbox.ts). */
  readonly #outbox: Database<QueuedNotification, string>;

  constructor(store: Store) {
    this.#outbox = store.db(OUTBOX_DB);
    this.#turn = store.turn;
    this.#records = store.db('ussd-sessions-by-start');
    this.#starts = store.db('ussd-session-starts');
    this.#index = store.db('ussd-session-expiry-index');
    this.#moveTheSessionsOfOlderLayouts(store);
  }

  async get(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return this.#read(sessionId);
  }

  /** What is stored, read at once: on one node the actor is its session's only writer, so it is current. */
  copy(sessionId: string): Versioned<UssdSession> | undefined {
    return this.#read(sessionId);
  }

  /** One node: the actor is its session's only writer (the sweep removes only expired records). */
  readonly copyCurrent = true;

  /** The notifications wait apart, in the LMDB outbox: the record is written as the step made it. */
  carried(_before: UssdSession | undefined, next: UssdSession): UssdSession {
    return next;
  }

  /** One node: this host is the only writer of the sessions it serves. */
  async holds(): Promise<boolean> {
    return true;
  }

  async begin(session: UssdSession, now: number, trace?: Context): Promise<Revision> {
    const current = this.#read(session.sessionId);
    if (current && current.value.expiresAt > now) throw new RevisionConflictError(session.sessionId, undefined);
    return this.#write(session, current, trace);
  }

  update(session: UssdSession, read: Versioned<UssdSession>, trace?: Context): Promise<Revision> {
    return this.#write(session, read, trace);
  }

  /** Reads the record of each entry marked LIVE in now's bucket and after, for its exact expiry. */
  async live(now: number): Promise<LiveSession[]> {
    const live: LiveSession[] = [];
    for (const { key, value } of this.#index.getRange({ start: time(bucketOf(now)) })) {
      if (value !== LIVE) continue;
      const session = this.#records.get(recordKeyIn(key));
      if (isLive(session, now)) live.push({ sessionId: sessionIdIn(key), expiresAt: session.expiresAt });
    }
    return live;
  }

  /** None: one node's notifications are in the LMDB outbox, beside the records (outbox.ts). */
  async withPendingOutbox(): Promise<string[]> {
    return [];
  }

  async removeExpired(now: number, removed?: (session: UssdSession) => void): Promise<number> {
    // The buckets up to now's: all of their sessions expired, but those of now's bucket that expire after now.
    const end = time(bucketOf(now) + 1);
    const expired = (key: string) => {
      const session = this.#records.get(recordKeyIn(key));
      return !session || session.expiresAt <= now;
    };
    let count = 0;
    let start: string | undefined;
    for (;;) {
      const keys = [...this.#index.getKeys({ start, end, exclusiveStart: start !== undefined, limit: SWEEP_BATCH })];
      // The live sessions of now's bucket are left out here, so a sweep that finds nothing expired writes nothing.
      const due = keys.filter((key) => bucketIn(key) <= now || expired(key));
      if (due.length > 0) {
        // Checked again inside the transaction: an actor may have renewed a session (moving its entry) since.
        // Past the free-space floor: the sweep frees pages (write-guard.ts).
        const gone = await freeingSpace(() =>
          this.#records.transaction(() => {
            const sessions: UssdSession[] = [];
            for (const key of due.filter(expired)) {
              const record = recordKeyIn(key);
              const sessionId = sessionIdIn(key);
              this.#index.removeSync(key);
              // The start names this record unless a session of the same ID began since (and moved it).
              if (this.#starts.get(sessionId) === startIn(record)) this.#starts.removeSync(sessionId);
              const session = this.#records.get(record);
              if (session && this.#records.removeSync(record)) sessions.push(session);
            }
            return sessions;
          }),
        );
        count += gone.length;
        if (removed) for (const session of gone) removed(session);
      }
      if (keys.length < SWEEP_BATCH) return count;
      start = keys[keys.length - 1];
    }
  }

  #read(sessionId: string): Versioned<UssdSession> | undefined {
    const createdAt = this.#starts.get(sessionId);
    if (createdAt === undefined) return undefined;
    const entry = this.#records.getEntry(recordKey(createdAt, sessionId));
    return entry && { value: entry.value, revision: entry.version ?? 0 };
  }

  /**
   * Writes `session`, replacing `replaced` (the record as its writer read it), or creating it when none, and its
   * start and index entries when they changed; refused (RevisionConflictError) once the stored record is no longer at
   * `replaced`'s revision, or exists when none was expected. The write joins this thread's turn commit
   * (store/turn-commit.ts): one synchronous transaction for the steps of an event-loop turn, synced to disk before
   * the promise resolves; the version check is LMDB's, inside that transaction.
   */
  async #write(
    session: UssdSession,
    replaced: Versioned<UssdSession> | undefined,
    trace: Context | undefined,
  ): Promise<Revision> {
    const revision = (replaced?.revision ?? 0) + 1;
    const applied = await this.#turn.write(() => this.#apply(session, revision, replaced), trace);
    if (!applied) throw new RevisionConflictError(session.sessionId, replaced?.revision);
    return revision;
  }

  /**
   * Inside the transaction: the record if `replaced` is still the stored one (none when undefined), and its start
   * and index entries. Returns false, having written nothing, when it is not.
   */
  #apply(session: UssdSession, revision: Revision, replaced: Versioned<UssdSession> | undefined): boolean {
    const key = recordKeyOf(session);
    const old = replaced?.value;
    const oldKey = old && recordKeyOf(old);
    const putIfVersion = this.#records.putSync as unknown as ConditionalPut;
    const removeIfVersion = this.#records.removeSync as unknown as ConditionalRemove;
    if (oldKey === key) {
      if (!putIfVersion.call(this.#records, key, session, revision, replaced!.revision)) return false;
    } else {
      // A new session, or one begun again under the ID of an expired one (with a new start): the start entry must
      // still name the replaced record (no record for a new session), and the replaced record goes.
      if (this.#starts.get(session.sessionId) !== old?.createdAt) return false;
      if (old && !removeIfVersion.call(this.#records, oldKey!, replaced!.revision)) return false;
      if (!putIfVersion.call(this.#records, key, session, revision, null)) {
        // A record under the new key without a start entry breaks the invariant: thrown, so the turn commit
        // aborts this write's transaction and nothing of it stays.
        throw new RevisionConflictError(session.sessionId, replaced?.revision);
      }
      this.#starts.putSync(session.sessionId, session.createdAt);
    }
    const entry = indexKey(session);
    const oldEntry = old && indexKey(old);
    if (oldEntry !== undefined && oldEntry !== entry) this.#index.removeSync(oldEntry);
    if (oldEntry !== entry || indexValue(old!) !== indexValue(session)) this.#index.putSync(entry, indexValue(session));
    putInStep(this.#outbox, session, old);
    return true;
  }

  /** Stores a record of an older layout with its revision, start and index entries (inside the move's transaction). */
  #place(session: UssdSession, revision: Revision): void {
    this.#records.putSync(recordKeyOf(session), session, revision);
    this.#starts.putSync(session.sessionId, session.createdAt);
    this.#index.putSync(indexKey(session), indexValue(session));
  }

  /**
   * A data directory of an older layout (records by session ID, with entry versions or, before those, with the
   * revision as a field; the expiry index by exact expiry or by bucket and session ID): its sessions move here once,
   * each with its revision, indexed anew, and the older databases are emptied, so no entry of them is left behind.
   * Checked again inside the transaction: every thread opens the repository.
   */
  #moveTheSessionsOfOlderLayouts(store: Store): void {
    const byId = store.db<UssdSession>('ussd-session-records');
    const unversioned = store.db<Stored<UssdSession>>('ussd-sessions');
    const older = [byId, unversioned, store.db('ussd-session-expiry'), store.db('ussd-session-expiry-buckets')];
    const anyOlder = () => older.some((db) => !isEmpty(db));
    if (!anyOlder()) return;
    this.#records.transactionSync(() => {
      if (!anyOlder()) return;
      for (const { value, version } of byId.getRange({ versions: true })) this.#place(value, version ?? 0);
      for (const { key, value } of unversioned.getRange()) {
        const { revision = 0, ...session } = value;
        if (this.#starts.get(key) === undefined) this.#place(session as UssdSession, revision);
      }
      for (const db of older) for (const key of [...db.getKeys()]) db.removeSync(key);
    });
  }
}
