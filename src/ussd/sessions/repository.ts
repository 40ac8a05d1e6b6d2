// Thread: any
// The USSD sessions as a record family, in two ports: the actor's store (UssdSessionRepository: only a session's
// actor writes it, begin then revision-checked updates) and the front door's live index (UssdLiveIndex: the live
// set, the expiry sweep). LMDB implements both in one (lmdb-repository.ts); cluster mode the partition journal's
// writer and reader (src/cluster/records/ussd/sessions.ts).
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
   * Whether this host still writes the session's partition (no newer claim fenced it); never takes it over. Absent
   * where this host is the session's only writer (one node).
   */
  holds?(sessionId: string): Promise<boolean>;
}

/** The front door's view of the sessions: what it lists, counts, sweeps and resumes. */
export interface UssdLiveIndex {
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
  /**
   * The sessions `test` picks whose record holds notifications not yet delivered (a node's inherited partitions).
   * None where notifications are kept apart from the records (one node: the LMDB outbox).
   */
  withPendingOutbox(test: (sessionId: string) => boolean): Promise<string[]>;
  /**
   * The live sessions as last read, for a gauge read at scrape time. Absent where the actor hosts count their own
   * (one node); present where they keep no live set (cluster mode: the front door counts the whole cluster's).
   */
  liveCount?(now: number): number;
}
