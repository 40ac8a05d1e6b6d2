// Thread: actor host
// The live USSD sessions of one host, for ussd_sessions_active. Counting them in LMDB at every
// scrape cost about 8 µs per session on the main thread (40 ms for 5 000 sessions); here the session actors
// keep each live session's expiry as they commit it, and the count is one pass over this map, on the host,
// once a second.
import { isLive, type UssdSession } from '../session.js';
import type { UssdLiveIndex } from '../sessions/repository.js';

export class LiveSessions {
  readonly #expiresAt = new Map<string, number>();

  /** Seeds the live sessions this host owns (they may predate it: a restarted host, a restarted server). */
  constructor(sessions: Pick<UssdLiveIndex, 'live'>, owns: (sessionId: string) => boolean, now = Date.now()) {
    sessions.live(now).then(
      (live) => {
        // A session committed since the read is newer than what the read saw.
        for (const { sessionId, expiresAt } of live) {
          if (owns(sessionId) && !this.#expiresAt.has(sessionId)) this.#expiresAt.set(sessionId, expiresAt);
        }
      },
      () => {}, // the gauge then counts only what this host commits from now on
    );
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
