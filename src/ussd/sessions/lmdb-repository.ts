// Both threads: USSD sessions in LMDB, database `ussd-session-records` (by session ID, the revision as LMDB's entry
// version), and their index by expiry time, `ussd-session-expiry`: key `<expiresAt, 15 digits>:<sessionId>`, value
// LIVE or ENDED. A session and its index entry are written in one conditional batch (one transaction, applied
// only while the record's version is the one the writer read, checked by LMDB's writer thread), so the sweep and
// the live listing read only the index range they need (expired: up to now; live: after now) and never the
// whole session database.
import type { Database } from 'lmdb';
import type { Store } from '../../store/env.js';
import { RevisionConflictError, type Revision, type Stored, type Versioned } from '../../store/revision.js';
import { ENDED_STATE, type UssdSession } from '../session.js';
import type { LiveSession, UssdSessionRepository } from './repository.js';

const LIVE = 0;
const ENDED = 1;
type IndexValue = typeof LIVE | typeof ENDED;

/** Expired sessions removed per write transaction, so a large sweep never holds the writer for long. */
const SWEEP_BATCH = 1000;
const TIME_DIGITS = 15;

/** Sorts by expiry time: epoch ms zero-padded, so string order is time order. */
function expiryKey(expiresAt: number, sessionId: string): string {
  return `${String(expiresAt).padStart(TIME_DIGITS, '0')}:${sessionId}`;
}

function parseExpiryKey(key: string): LiveSession {
  return { expiresAt: Number(key.slice(0, TIME_DIGITS)), sessionId: key.slice(TIME_DIGITS + 1) };
}

/** The first key of the entries expiring after `now`. */
const after = (now: number) => String(now + 1).padStart(TIME_DIGITS, '0');

const indexValue = (session: UssdSession): IndexValue => (session.state === ENDED_STATE ? ENDED : LIVE);

const isEmpty = (db: Database<unknown, string>) => [...db.getKeys({ limit: 1 })].length === 0;

export class LmdbUssdSessionRepository implements UssdSessionRepository {
  readonly #sessions: Database<UssdSession, string>;
  readonly #expiry: Database<IndexValue, string>;

  constructor(store: Store) {
    this.#sessions = store.db('ussd-session-records');
    this.#expiry = store.db('ussd-session-expiry');
    this.#moveSessionsOfTheUnversionedDatabase(store.db('ussd-sessions'));
    this.#indexSessionsWrittenBeforeTheIndex();
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

  async live(now: number): Promise<LiveSession[]> {
    const live: LiveSession[] = [];
    for (const { key, value } of this.#expiry.getRange({ start: after(now) })) if (value === LIVE) live.push(parseExpiryKey(key));
    return live;
  }

  async removeExpired(now: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const due = [...this.#expiry.getKeys({ end: after(now), limit: SWEEP_BATCH })];
      if (due.length === 0) return removed;
      // Checked again inside the transaction: an actor may have renewed the session since the range read.
      removed += await this.#sessions.transaction(() => {
        let count = 0;
        for (const key of due) {
          this.#expiry.removeSync(key);
          const { sessionId } = parseExpiryKey(key);
          const session = this.#sessions.get(sessionId);
          if (session && session.expiresAt <= now) count += this.#sessions.removeSync(sessionId) ? 1 : 0;
        }
        return count;
      });
      if (due.length < SWEEP_BATCH) return removed;
    }
  }

  #read(sessionId: string): Versioned<UssdSession> | undefined {
    const entry = this.#sessions.getEntry(sessionId);
    return entry && { value: entry.value, revision: entry.version ?? 0 };
  }

  /**
   * Writes `session` and its index entry, replacing `replaced` (the record as its writer read it), or creating it
   * when none; refused (RevisionConflictError) once the stored record is no longer at `replaced`'s revision, or
   * exists when none was expected. No transaction callback runs on this thread: LMDB's writer checks the version
   * and applies the three writes, or none, in the transaction it commits (synced) before the promise resolves.
   */
  async #write(session: UssdSession, replaced: Versioned<UssdSession> | undefined): Promise<Revision> {
    const { sessionId } = session;
    const revision = (replaced?.revision ?? 0) + 1;
    const writes = () => {
      this.#sessions.put(sessionId, session, revision);
      if (replaced) this.#expiry.remove(expiryKey(replaced.value.expiresAt, sessionId));
      this.#expiry.put(expiryKey(session.expiresAt, sessionId), indexValue(session));
    };
    const written = replaced ? await this.#sessions.ifVersion(sessionId, replaced.revision, writes) : await this.#sessions.ifNoExists(sessionId, writes);
    if (!written) throw new RevisionConflictError(sessionId, replaced?.revision);
    return revision;
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

  /** A data directory from before the index: index its sessions once, or they would never be swept. */
  #indexSessionsWrittenBeforeTheIndex(): void {
    if (!isEmpty(this.#expiry) || isEmpty(this.#sessions)) return;
    this.#sessions.transactionSync(() => {
      for (const { key, value } of this.#sessions.getRange()) this.#expiry.putSync(expiryKey(value.expiresAt, key), indexValue(value));
    });
  }
}
