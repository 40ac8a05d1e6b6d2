// Thread: any (the chat actor writes, the front door lists)
// Chat session records in the LMDB database
// `oracle-sessions`, with a per-user index so that listing a user's sessions newest first is one range read
// (the index entries hold the view the list answers) and the total is one read:
//   s|<sessionId>                                       -> SessionRecord & { revision }
//   u|<userDid>|<lastUpdated µs, 18 digits>|<sessionId> -> SessionView
//   c|<userDid>                                         -> number of the user's sessions
//   v|<userDid>                                         -> the list's version (listVersion), +1 per write
// A record, its index entry, the count and the version change in one transaction. `|` cannot occur in a DID,
// so keys are unambiguous.
import type { Store } from '../../../store/env.js';
import {
  RevisionConflictError,
  versioned,
  type Revision,
  type Stored,
  type Versioned,
} from '../../../store/revision.js';
import { viewOf, type SessionRecord, type SessionView } from '../../../oracle/sessions/records.js';
import { SessionLimitError, type SessionRepository } from '../../../oracle/sessions/repository.js';
import { freeingSpace } from '../../../store/write-guard.js';

/** The LMDB repository, plus its update as a step of a larger transaction (turn-commit.ts). */
export interface LmdbSessionRepository extends SessionRepository {
  /**
   * Inside a write transaction: checks the revision (RevisionConflictError when it moved) and answers the
   * write, to make once every other check of the transaction has passed.
   */
  stageUpdate(record: SessionRecord, revision: Revision): () => Versioned<SessionRecord>;
}

const recordKey = (sessionId: string) => `s|${sessionId}`;
const userPrefix = (userDid: string) => `u|${userDid}|`;
const countKey = (userDid: string) => `c|${userDid}`;
const versionKey = (userDid: string) => `v|${userDid}`;
const indexKey = (record: SessionRecord) =>
  `${userPrefix(record.userDid)}${String(Math.round(record.lastUpdatedAt * 1000)).padStart(18, '0')}|${record.sessionId}`;

export function openLmdbSessionRepository(store: Store): LmdbSessionRepository {
  const db = store.db<Stored<SessionRecord> | SessionView | number>('oracle-sessions');

  const read = (sessionId: string): Versioned<SessionRecord> | undefined => {
    const stored = db.get(recordKey(sessionId));
    return typeof stored === 'object' && 'userDid' in stored ? versioned(stored) : undefined;
  };
  const numberAt = (key: string): number => {
    const value = db.get(key);
    return typeof value === 'number' ? value : 0;
  };
  const countOf = (userDid: string) => numberAt(countKey(userDid));
  const versionOf = (userDid: string) => numberAt(versionKey(userDid));
  /** Inside a transaction: the current record, which must be at `expected` (undefined: absent). */
  const expect = (sessionId: string, expected: Revision | undefined) => {
    const current = read(sessionId);
    if (current?.revision !== expected) throw new RevisionConflictError(recordKey(sessionId), expected);
    return current;
  };
  const write = (record: SessionRecord, revision: Revision): Versioned<SessionRecord> => {
    db.put(recordKey(record.sessionId), { ...record, revision });
    db.put(indexKey(record), viewOf(record));
    db.put(versionKey(record.userDid), versionOf(record.userDid) + 1);
    return { value: record, revision };
  };

  const stageUpdate = (record: SessionRecord, revision: Revision) => {
    const current = expect(record.sessionId, revision)!;
    return () => {
      db.remove(indexKey(current.value));
      return write({ ...record, userDid: current.value.userDid }, revision + 1);
    };
  };

  return {
    stageUpdate,

    get: async (sessionId) => read(sessionId),

    create: (record, maxPerUser = Number.POSITIVE_INFINITY) =>
      db.transaction(() => {
        expect(record.sessionId, undefined);
        // The count is read and moved in this one write transaction (lmdb-js runs them one at a time): exact.
        const count = countOf(record.userDid);
        if (count >= maxPerUser) throw new SessionLimitError(maxPerUser);
        db.put(countKey(record.userDid), count + 1);
        return write(record, 1);
      }),

    update: (record, revision) => db.transaction(() => stageUpdate(record, revision)()),

    // Past the free-space floor (write-guard.ts): a delete frees pages.
    remove: (sessionId, revision) =>
      freeingSpace(() =>
        db.transaction(() => {
          const { value } = expect(sessionId, revision)!;
          db.remove(indexKey(value));
          db.remove(recordKey(sessionId));
          db.put(countKey(value.userDid), Math.max(0, countOf(value.userDid) - 1));
          db.put(versionKey(value.userDid), versionOf(value.userDid) + 1);
        }),
      ),

    listVersion: async (userDid) => versionOf(userDid),

    // One node: only the session's actor writes its record.
    vouchesFor: () => true,

    async listByUser(userDid, { offset, limit }) {
      const prefix = userPrefix(userDid);
      const sessions: SessionView[] = [];
      for (const { value } of db.getRange({ start: `${prefix}\uffff`, end: prefix, reverse: true, offset, limit })) {
        if (typeof value === 'object') sessions.push(value as SessionView);
      }
      return { sessions, total: countOf(userDid) };
    },
  };
}
