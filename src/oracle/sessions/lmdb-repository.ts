// Both threads (the chat actor writes, the front door lists): chat session records in the LMDB database
// `oracle-sessions`, with a per-user index so that listing a user's sessions newest first is one range read
// (the index entries hold the view the list answers) and the total is one read:
//   s|<sessionId>                                       -> SessionRecord & { _rev }
//   u|<userDid>|<lastUpdated µs, 18 digits>|<sessionId> -> SessionView
//   c|<userDid>                                         -> number of the user's sessions
// A record, its index entry and the count change in one transaction. `|` cannot occur in a DID, so keys are
// unambiguous.
import type { Store } from '../../store/env.js';
import { RevisionConflictError, type Revisioned } from '../revisions.js';
import { viewOf, type SessionRecord, type SessionView } from './records.js';
import type { SessionRepository } from './repository.js';

type StoredRecord = SessionRecord & { _rev?: number };

const recordKey = (sessionId: string) => `s|${sessionId}`;
const userPrefix = (userDid: string) => `u|${userDid}|`;
const countKey = (userDid: string) => `c|${userDid}`;
const indexKey = (record: SessionRecord) =>
  `${userPrefix(record.userDid)}${String(Math.round(record.lastUpdatedAt * 1000)).padStart(18, '0')}|${record.sessionId}`;

export function openLmdbSessionRepository(store: Store): SessionRepository {
  const db = store.db<StoredRecord | SessionView | number>('oracle-sessions');

  const read = (sessionId: string): Revisioned<SessionRecord> | undefined => {
    const stored = db.get(recordKey(sessionId));
    if (typeof stored !== 'object' || !('userDid' in stored)) return undefined;
    const { _rev = 0, ...record } = stored;
    return { value: record, revision: _rev };
  };
  const countOf = (userDid: string): number => {
    const count = db.get(countKey(userDid));
    return typeof count === 'number' ? count : 0;
  };
  /** Inside a transaction: the current record, which must be at `expected` (undefined: absent). */
  const expect = (sessionId: string, expected: number | undefined) => {
    const current = read(sessionId);
    if (current?.revision !== expected) throw new RevisionConflictError(`Session ${sessionId}`);
    return current;
  };
  const write = (record: SessionRecord, revision: number): Revisioned<SessionRecord> => {
    db.put(recordKey(record.sessionId), { ...record, _rev: revision });
    db.put(indexKey(record), viewOf(record));
    return { value: record, revision };
  };

  return {
    get: async (sessionId) => read(sessionId),

    create: (record) =>
      db.transaction(() => {
        expect(record.sessionId, undefined);
        db.put(countKey(record.userDid), countOf(record.userDid) + 1);
        return write(record, 1);
      }),

    update: (record, revision) =>
      db.transaction(() => {
        const current = expect(record.sessionId, revision)!;
        db.remove(indexKey(current.value));
        return write({ ...record, userDid: current.value.userDid }, revision + 1);
      }),

    remove: (sessionId, revision) =>
      db.transaction(() => {
        const { value } = expect(sessionId, revision)!;
        db.remove(indexKey(value));
        db.remove(recordKey(sessionId));
        db.put(countKey(value.userDid), Math.max(0, countOf(value.userDid) - 1));
      }),

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
