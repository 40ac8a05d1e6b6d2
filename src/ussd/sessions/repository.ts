// Thread: any
// The USSD sessions as a record family, behind an interface the LMDB store implements today
// (lmdb-repository.ts) and a replicated store can implement for cluster mode. Only a session's actor writes
// it (begin, then revision-checked updates); the front door reads the live set and runs the expiry sweep.
import type { Revision, Versioned } from '../../store/revision.js';
import type { UssdSession } from '../session.js';
import type { Context } from '../../telemetry/index.js';

export interface LiveSession {
  sessionId: string;
  expiresAt: number;
}

export interface UssdSessionRepository {
  get(sessionId: string): Promise<Versioned<UssdSession> | undefined>;
  /**
   * Writes a new session: created when none is stored, or replacing one that expired by `now` (the same id
   * dialled again). RevisionConflictError when a session that has not expired is stored. `trace` (here and in
   * update): the writer's trace context, for the write's span (tracing on, in a recorded trace).
   */
  begin(session: UssdSession, now: number, trace?: Context): Promise<Revision>;
  /**
   * Replaces `read`, the session as its caller last read or wrote it (get, begin, update), if the stored revision is
   * still `read.revision`; RevisionConflictError when it moved or is gone. (The LMDB store takes the expiry of
   * `read` to move the session's index entry without reading the record again.)
   */
  update(session: UssdSession, read: Versioned<UssdSession>, trace?: Context): Promise<Revision>;
  /**
   * The live sessions (not expired by `now`, not ended), from an index of the sessions by expiry: never a scan of
   * every record. (The LMDB store's index keys coarse expiry buckets, so it reads the record of each session its
   * index lists as live, for the exact expiry.)
   */
  live(now: number): Promise<LiveSession[]>;
  /**
   * Removes the sessions that expired by `now`; answers how many. Reads only the expired part of an index by
   * expiry time (a store with its own expiry, such as a KV bucket's TTL, may do nothing here). `removed` is told
   * each session removed, once its removal is committed (for the sessions that timed out: not ended, expired).
   */
  removeExpired(now: number, removed?: (session: UssdSession) => void): Promise<number>;
}
