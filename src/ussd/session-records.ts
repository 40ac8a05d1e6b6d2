// Cross-session reads of the USSD session database (operator routes) and the expiry sweep.
// They read LMDB directly on the main thread; a session's own updates go through its actor.
import type { Database } from 'lmdb';
import { ENDED_STATE } from './menu/index.js';
import type { UssdSession } from './session.js';

export type SessionDb = Database<UssdSession, string>;

/** Active: not expired and not closed by an END (an ended record is only kept to answer gateway retries). */
export function isLive(session: UssdSession | undefined, now = Date.now()): session is UssdSession {
  return session !== undefined && session.expiresAt > now && session.state !== ENDED_STATE;
}

/** Expired records may be removed; ended ones stay until their short retention runs out. */
function isExpired(session: UssdSession | undefined, now: number): boolean {
  return session === undefined || session.expiresAt <= now;
}

export function activeSessionIds(db: SessionDb, now = Date.now()): string[] {
  const ids: string[] = [];
  for (const { key, value } of db.getRange()) if (isLive(value, now)) ids.push(key);
  return ids;
}

/** Deletes expired sessions; the check and the delete share one transaction so a fresh update is never lost. */
export async function sweepExpired(db: SessionDb, now = Date.now()): Promise<number> {
  const expired: string[] = [];
  for (const { key, value } of db.getRange()) if (isExpired(value, now)) expired.push(key);
  if (expired.length === 0) return 0;
  return db.transaction(() => {
    let removed = 0;
    for (const key of expired) {
      if (isExpired(db.get(key), now)) {
        db.removeSync(key);
        removed++;
      }
    }
    return removed;
  });
}
