// Thread: any
// The USSD sessions as a record family, in two ports: the actor's store (UssdSessionStore: only a session's actor
// writes it, begin then revision-checked updates) and the front door's live index (UssdLiveIndex: the live set, the
// expiry sweep). LMDB implements both in one (src/records/lmdb/ussd/sessions.ts); cluster mode the partition
// journal's writer and reader (src/cluster/records/ussd/sessions.ts).
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
}

/**
 * The actor's store: the repository, and what the engine says about the copy an actor steps from. The actor runs the
 * same on every engine (session-actor.ts): it steps from its copy, which the write's revision check proves; before it
 * answers without writing or calls an endpoint it confirms the copy with `get`; a step refused either way is redone
 * once from `get`. One node never refuses (the actor is its session's only writer); a cluster may (fencing).
 */
export interface UssdSessionStore extends UssdSessionRepository {
  /**
   * The session as this host holds it, with no proof that it is current (at once where it can: no promise for the
   * common step). One node: what is stored. A cluster: what this host's writer last saw of it (another node may
   * have written since; its partition is loaded first).
   */
  copy(sessionId: string): Versioned<UssdSession> | undefined | Promise<Versioned<UssdSession> | undefined>;
  /**
   * Whether a copy (copy(), or what the actor last wrote) is always what is stored: one node, where the actor is its
   * session's only writer. Then a step on it is final (never confirmed, never redone) and no message reads fresh.
   */
  readonly copyCurrent: boolean;
  /**
   * The record a step writes over `before`. Where the records are the outbox (a cluster), the notifications of
   * `before` not yet delivered are carried on; one node keeps them apart (the LMDB outbox): `next` as it is.
   */
  carried(before: UssdSession | undefined, next: UssdSession): UssdSession;
  /**
   * Whether this host still writes the session: one node, always; a cluster, while no newer claim fenced its
   * partition (never takes it over). Asked before each delivery of a notification.
   */
  holds(sessionId: string): Promise<boolean>;
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
