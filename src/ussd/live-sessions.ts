// The live USSD sessions of one actor host, for ussd_sessions_active. Counting them in LMDB at every scrape cost
// about 8 µs per session on the main thread (40 ms for 5 000 sessions); here the session actors keep each live
// session's expiry as they commit it, and the count is one pass over this map, on the host, once a second.
import { isLive, type SessionDb } from './session-records.js';
import type { UssdSession } from './session.js';

export class LiveSessions {
  readonly #expiresAt = new Map<string, number>();

  /** Seeds from LMDB the live sessions this host owns (they may predate it: a restarted host, a restarted server). */
  constructor(sessions: SessionDb, owns: (sessionId: string) => boolean, now = Date.now()) {
    for (const { key, value } of sessions.getRange()) if (owns(key) && isLive(value, now)) this.#expiresAt.set(key, value.expiresAt);
  }

  /** A session as just committed by its actor. */
  committed(sessionId: string, session: UssdSession): void {
    if (isLive(session)) this.#expiresAt.set(sessionId, session.expiresAt);
    else this.#expiresAt.delete(sessionId);
  }

  /** Sessions not yet expired; forgets the expired ones. */
  count(now = Date.now()): number {
    for (const [sessionId, expiresAt] of this.#expiresAt) if (expiresAt <= now) this.#expiresAt.delete(sessionId);
    return this.#expiresAt.size;
  }
}
