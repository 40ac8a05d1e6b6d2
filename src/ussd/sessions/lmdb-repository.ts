// Both threads: USSD sessions in LMDB, database `ussd-session-records` (by session ID, the revision as LMDB's entry
// version), and their index by expiry, `ussd-session-expiry-buckets`: key `<bucket, 15 digits>:<sessionId>`, value
// LIVE or ENDED, where the bucket is the session's expiry rounded up to a whole minute (see bucketOf). A session and
// its index entry are written in one transaction (the actor host's turn commit, store/turn-commit.ts), applied only
// while the record's version is the one the writer read, checked by LMDB inside it; a step that keeps the bucket and
// the state writes the record alone, so most steps write no index entry. The sweep and the live listing read only the
// index range they need (expired: buckets up to now's; live: from now's) and the records it names, never the whole
// session database.
//
// Why both stay exact. Invariant: each stored record R has exactly one index entry, `<bucketOf(R.expiresAt)>:<id>`
// with R's state, and there is no other entry. Every write keeps it in the transaction that writes the record:
// begin and update replace the entry of the record they replace (that record is the stored one, since the write
// applies only at its revision) when the bucket or the state changes, and the sweep removes a record with its
// entry. Since bucketOf(t) >= t, an entry whose bucket is at or before now names an expired session (a live
// session can never sit in a passed bucket: its step would have moved the entry); and a session expired by now
// has bucketOf(expiresAt) <= bucketOf(now), so the sweep, reading the buckets up to now's and each record's exact
// expiry, finds every expired session, and the live listing, reading the buckets from now's on, every live one.
import type { Database } from 'lmdb';
import type { Store } from '../../store/env.js';
import type { TurnCommit } from '../../store/turn-commit.js';
import { RevisionConflictError, type Revision, type Stored, type Versioned } from '../../store/revision.js';
import { ENDED_STATE, isLive, type UssdSession } from '../session.js';
import type { LiveSession, UssdSessionRepository } from './repository.js';

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

const indexKey = (sessionId: string, expiresAt: number) => `${time(bucketOf(expiresAt))}:${sessionId}`;

const bucketIn = (key: string) => Number(key.slice(0, TIME_DIGITS));

const sessionIdOf = (key: string) => key.slice(TIME_DIGITS + 1);

const indexValue = (session: UssdSession): IndexValue => (session.state === ENDED_STATE ? ENDED : LIVE);

/**
 * lmdb's conditional put inside a transaction (its typings omit this form): stores `value` at `version` and returns
 * true only while the entry's version is `ifVersion`, or, for null, while there is no entry.
 */
type ConditionalPut = (key: string, value: UssdSession, version: number, ifVersion: number | null) => boolean;

const isEmpty = (db: Database<unknown, string>) => [...db.getKeys({ limit: 1 })].length === 0;

export class LmdbUssdSessionRepository implements UssdSessionRepository {
  readonly #sessions: Database<UssdSession, string>;
  readonly #index: Database<IndexValue, string>;
  readonly #turn: TurnCommit;

  constructor(store: Store) {
    this.#turn = store.turn;
    this.#sessions = store.db('ussd-session-records');
    this.#index = store.db('ussd-session-expiry-buckets');
    this.#moveSessionsOfTheUnversionedDatabase(store.db('ussd-sessions'));
    this.#rebuildTheIndexOfAnOlderLayout(store.db('ussd-session-expiry'));
  }

  async get(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return this.#read(sessionId);
  }

  async begin(session: UssdSession, now: number): Promise<Revision> {
    const current = this.#read(session.sessionId);
    if (current && current.value.expiresAt > now) throw new RevisionConflictError(session.sessionId, undefined);
    return this.#write(session, current);
  }

  update(session: UssdSession, read: Versioned<UssdSession>): Promise<Revision> {
    return this.#write(session, read);
  }

  /** Reads the record of each entry marked LIVE in now's bucket and after, for its exact expiry. */
  async live(now: number): Promise<LiveSession[]> {
    const live: LiveSession[] = [];
    for (const { key, value } of this.#index.getRange({ start: time(bucketOf(now)) })) {
      if (value !== LIVE) continue;
      const sessionId = sessionIdOf(key);
      const session = this.#sessions.get(sessionId);
      if (isLive(session, now)) live.push({ sessionId, expiresAt: session.expiresAt });
    }
    return live;
  }

  async removeExpired(now: number): Promise<number> {
    // The buckets up to now's: all of their sessions expired, but those of now's bucket that expire after now.
    const end = time(bucketOf(now) + 1);
    const expired = (key: string) => {
      const session = this.#sessions.get(sessionIdOf(key));
      return !session || session.expiresAt <= now;
    };
    let removed = 0;
    let start: string | undefined;
    for (;;) {
      const keys = [...this.#index.getKeys({ start, end, exclusiveStart: start !== undefined, limit: SWEEP_BATCH })];
      // The live sessions of now's bucket are left out here, so a sweep that finds nothing expired writes nothing.
      const due = keys.filter((key) => bucketIn(key) <= now || expired(key));
      if (due.length > 0) {
        // Checked again inside the transaction: an actor may have renewed a session (moving its entry) since.
        removed += await this.#sessions.transaction(() => {
          let count = 0;
          for (const key of due.filter(expired)) {
            this.#index.removeSync(key);
            count += this.#sessions.removeSync(sessionIdOf(key)) ? 1 : 0;
          }
          return count;
        });
      }
      if (keys.length < SWEEP_BATCH) return removed;
      start = keys[keys.length - 1];
    }
  }

  #read(sessionId: string): Versioned<UssdSession> | undefined {
    const entry = this.#sessions.getEntry(sessionId);
    return entry && { value: entry.value, revision: entry.version ?? 0 };
  }

  /**
   * Writes `session`, replacing `replaced` (the record as its writer read it), or creating it when none, and its
   * index entry when its bucket or its state changed; refused (RevisionConflictError) once the stored record is no
   * longer at `replaced`'s revision, or exists when none was expected. The write joins this thread's turn commit
   * (store/turn-commit.ts): one synchronous transaction for the steps of an event-loop turn, synced to disk before
   * the promise resolves; the version check is LMDB's, inside that transaction.
   */
  async #write(session: UssdSession, replaced: Versioned<UssdSession> | undefined): Promise<Revision> {
    const revision = (replaced?.revision ?? 0) + 1;
    const applied = await this.#turn.write(() => this.#apply(session, revision, replaced));
    if (!applied) throw new RevisionConflictError(session.sessionId, replaced?.revision);
    return revision;
  }

  /** Inside the transaction: the record if still at `replaced`'s revision (absent when none), and its index entry. */
  #apply(session: UssdSession, revision: Revision, replaced: Versioned<UssdSession> | undefined): boolean {
    const { sessionId } = session;
    const putIfVersion = this.#sessions.putSync as unknown as ConditionalPut;
    if (!putIfVersion.call(this.#sessions, sessionId, session, revision, replaced ? replaced.revision : null)) return false;
    const old = replaced?.value;
    const stale = old && bucketOf(old.expiresAt) !== bucketOf(session.expiresAt) ? indexKey(sessionId, old.expiresAt) : undefined;
    // Inside a transaction lmdb applies put and remove at once (their promise is already settled).
    if (stale) this.#index.remove(stale);
    if (!old || stale !== undefined || indexValue(old) !== indexValue(session)) this.#index.put(indexKey(sessionId, session.expiresAt), indexValue(session));
    return true;
  }

  /** A data directory from before revisions were entry versions: its sessions move here once, revision kept. */
  #moveSessionsOfTheUnversionedDatabase(unversioned: Database<Stored<UssdSession>, string>): void {
    if (isEmpty(unversioned)) return;
    this.#sessions.transactionSync(() => {
      for (const { key, value } of [...unversioned.getRange()]) {
        const { revision = 0, ...session } = value;
        if (!this.#sessions.doesExist(key)) this.#sessions.putSync(key, session as UssdSession, revision);
        unversioned.removeSync(key);
      }
    });
  }

  /**
   * A data directory of an older layout, whose index keys were exact expiry times (`ussd-session-expiry`), or
   * from before any index: the bucketed index is built once from the records, and the old one emptied, so no
   * entry of it is left behind. Checked again inside the transaction: every thread opens the repository.
   */
  #rebuildTheIndexOfAnOlderLayout(exact: Database<unknown, string>): void {
    const older = () => !isEmpty(exact) || (isEmpty(this.#index) && !isEmpty(this.#sessions));
    if (!older()) return;
    this.#sessions.transactionSync(() => {
      if (!older()) return;
      for (const key of [...exact.getKeys()]) exact.removeSync(key);
      for (const key of [...this.#index.getKeys()]) this.#index.removeSync(key);
      for (const { key, value } of this.#sessions.getRange()) this.#index.putSync(indexKey(key, value.expiresAt), indexValue(value));
    });
  }
}
