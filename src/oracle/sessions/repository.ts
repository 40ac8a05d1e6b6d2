// Thread: any
// Where chat session records live. The session's actor is their only writer (one
// session, one writer; revisions keep a stale writer from overwriting newer state all the same); the front
// door reads the per-user lists (GET /sessions), which span sessions of many actors.
import type { Versioned } from '../../store/revision.js';
import type { SessionRecord, SessionView } from './records.js';

export interface SessionPage {
  /** Newest `lastUpdatedAt` first. */
  sessions: SessionView[];
  /** All of the user's sessions. */
  total: number;
}

/** A create refused because the user already holds `limit` sessions: nothing was written. */
export class SessionLimitError extends Error {
  constructor(readonly limit: number) {
    super(`at most ${limit} sessions per user`);
    this.name = 'SessionLimitError';
  }
}

export interface SessionRepository {
  get(sessionId: string): Promise<Versioned<SessionRecord> | undefined>;
  /**
   * Whether `copy`, the record as its actor last read or wrote it, is known at once to be the stored one: on one
   * node it is (the actor is its session's only writer); in a cluster only a read (`get`) can tell, as another node
   * may have written since the session's partition moved away and back.
   */
  vouchesFor(copy: Versioned<SessionRecord>): boolean;
  /**
   * Create-only: RevisionConflictError when the id is taken. With `maxPerUser`, SessionLimitError when the user
   * already holds that many sessions, counted in the same commit as the create, so racing creates cannot pass it.
   */
  create(record: SessionRecord, maxPerUser?: number): Promise<Versioned<SessionRecord>>;
  /** Revision-checked (RevisionConflictError when it moved); the record keeps its user. */
  update(record: SessionRecord, revision: number): Promise<Versioned<SessionRecord>>;
  /** Revision-checked removal of the record (its transcript is TranscriptRepository's). */
  remove(sessionId: string, revision: number): Promise<void>;
  /** One page of a user's sessions and their total. */
  listByUser(userDid: string, page: { offset: number; limit: number }): Promise<SessionPage>;
  /**
   * A number that changes with every write to the user's list (create, update, remove), committed with the
   * write: a page read after it is at least as new as the version, so it can be cached under it.
   */
  listVersion(userDid: string): Promise<number>;
}
