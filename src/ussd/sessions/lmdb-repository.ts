// Both threads: USSD sessions in LMDB, database `ussd-sessions` (by session ID), and their index by expiry
// time, `ussd-session-expiry`: key `<expiresAt, 15 digits>:<sessionId>`, value LIVE or ENDED. A session and
// its index entry are written in one transaction, so the sweep and the live listing read only the index
// range they need (expired: up to now; live: after now) and never the whole session database.
import type { Database } from 'lmdb';
import type { Store } from '../../store/env.js';
import { RevisionConflictError, versioned, writeIfRevision, type Revision, type Stored, type Versioned } from '../../store/revision.js';
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

export class LmdbUssdSessionRepository implements UssdSessionRepository {
  readonly #sessions: Database<Stored<UssdSession>, string>;
  readonly #expiry: Database<IndexValue, string>;

  constructor(store: Store) {
    this.#sessions = store.db('ussd-sessions');
    this.#expiry = store.db('ussd-session-expiry');
    this.#indexSessionsWrittenBeforeTheIndex();
  }

  async get(sessionId: string): Promise<Versioned<UssdSession> | undefined> {
    return versioned(this.#sessions.get(sessionId));
  }

  async begin(session: UssdSession, now: number): Promise<Revision> {
    const revision = await this.#sessions.transaction(() => {
      const current = this.#sessions.get(session.sessionId);
      if (current && current.expiresAt > now) return undefined;
      return this.#write(session, current && (current.revision ?? 0), current);
    });
    if (revision === undefined) throw new RevisionConflictError(session.sessionId, undefined);
    return revision;
  }

  async update(session: UssdSession, expected: Revision): Promise<Revision> {
    const revision = await this.#sessions.transaction(() => this.#write(session, expected, this.#sessions.get(session.sessionId)));
    if (revision === undefined) throw new RevisionConflictError(session.sessionId, expected);
    return revision;
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

  /** Inside a write transaction: the session and its index entry, if the stored revision is `expected` (none: undefined). */
  #write(session: UssdSession, expected: Revision | undefined, current: Stored<UssdSession> | undefined): Revision | undefined {
    const revision = writeIfRevision(this.#sessions, session.sessionId, session, expected, current);
    if (revision === undefined) return undefined;
    if (current) this.#expiry.removeSync(expiryKey(current.expiresAt, session.sessionId));
    this.#expiry.putSync(expiryKey(session.expiresAt, session.sessionId), session.state === ENDED_STATE ? ENDED : LIVE);
    return revision;
  }

  /** A data directory from before the index: index its sessions once, or they would never be swept. */
  #indexSessionsWrittenBeforeTheIndex(): void {
    const isEmpty = (db: Database<unknown, string>) => [...db.getKeys({ limit: 1 })].length === 0;
    if (!isEmpty(this.#expiry) || isEmpty(this.#sessions)) return;
    this.#sessions.transactionSync(() => {
      for (const { key, value } of this.#sessions.getRange()) {
        this.#expiry.putSync(expiryKey(value.expiresAt, key), value.state === ENDED_STATE ? ENDED : LIVE);
      }
    });
  }
}
