// Chat session records in the LMDB database `oracle-sessions`, with a per-user index so that listing a
// user's sessions newest first is one range read (the index entries hold a copy of the record) and the
// total is one read:
//   s|<sessionId>                                       -> SessionRecord
//   u|<userDid>|<lastUpdated µs, 18 digits>|<sessionId> -> SessionView (what the list answers)
//   c|<userDid>                                         -> number of the user's sessions
// The chat actor writes (one session, one writer); the main thread reads (ownership checks, listings).
// `|` cannot occur in a DID, so keys are unambiguous.
import type { Database } from 'lmdb';
import type { Store } from '../../store/env.js';

export interface SessionRecord {
  sessionId: string;
  userDid: string;
  oracleDid: string;
  oracleName: string;
  title: string;
  /** Milliseconds since the epoch, with sub-millisecond precision (see preciseNow). */
  createdAt: number;
  lastUpdatedAt: number;
}

/** What clients see (oracle-wire-format.md, Sessions). */
export interface SessionView {
  sessionId: string;
  oracleName: string;
  title: string;
  createdAt: string;
  lastUpdatedAt: string;
  oracleDid: string;
}

export type SessionDb = Database<SessionRecord | SessionView | number, string>;

export const UNTITLED = 'Untitled';
const TITLE_MAX = 60;

export const openSessionDb = (store: Store): SessionDb => store.db<SessionRecord | SessionView | number>('oracle-sessions');

const recordKey = (sessionId: string) => `s|${sessionId}`;
const userPrefix = (userDid: string) => `u|${userDid}|`;
const countKey = (userDid: string) => `c|${userDid}`;
const indexKey = (record: SessionRecord) =>
  `${userPrefix(record.userDid)}${String(Math.round(record.lastUpdatedAt * 1000)).padStart(18, '0')}|${record.sessionId}`;

/**
 * Now in milliseconds with microseconds: sessions created or updated within one millisecond (a burst of
 * POST /sessions) still list in the order they happened.
 */
export const preciseNow = (): number => performance.timeOrigin + performance.now();

export function viewOf(record: SessionRecord): SessionView {
  return {
    sessionId: record.sessionId,
    oracleName: record.oracleName,
    title: record.title,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    oracleDid: record.oracleDid,
  };
}

export function getSession(db: SessionDb, sessionId: string): SessionRecord | undefined {
  const value = db.get(recordKey(sessionId));
  return typeof value === 'object' ? (value as SessionRecord) : undefined;
}

/** The session if it exists and belongs to `userDid`. */
export function ownedSession(db: SessionDb, sessionId: string, userDid: string): SessionRecord | undefined {
  const record = getSession(db, sessionId);
  return record?.userDid === userDid ? record : undefined;
}

/** Writes a record and moves its index entry. Call inside a transaction (store.root.transaction). */
export function writeSession(db: SessionDb, record: SessionRecord, previous?: SessionRecord): void {
  if (previous) db.remove(indexKey(previous));
  else db.put(countKey(record.userDid), countOf(db, record.userDid) + 1);
  db.put(recordKey(record.sessionId), record);
  db.put(indexKey(record), viewOf(record));
}

/** Removes a record and its index entry. Call inside a transaction. */
export function deleteSession(db: SessionDb, record: SessionRecord): void {
  db.remove(indexKey(record));
  db.remove(recordKey(record.sessionId));
  db.put(countKey(record.userDid), Math.max(0, countOf(db, record.userDid) - 1));
}

function countOf(db: SessionDb, userDid: string): number {
  const count = db.get(countKey(userDid));
  return typeof count === 'number' ? count : 0;
}

/** A title from the first message: its first line, at most 60 characters, cut at a word. */
export function titleFrom(message: string): string {
  const line = message.trim().split('\n', 1)[0].replace(/\s+/g, ' ');
  if (line.length <= TITLE_MAX) return line || UNTITLED;
  const cut = line.slice(0, TITLE_MAX);
  const space = cut.lastIndexOf(' ');
  return `${space > 20 ? cut.slice(0, space) : cut}…`;
}

/** One page of a user's sessions, newest `lastUpdatedAt` first, and how many there are in all. */
export function listSessions(db: SessionDb, userDid: string, offset: number, limit: number): { sessions: SessionView[]; total: number } {
  const prefix = userPrefix(userDid);
  const end = `${prefix}\uffff`;
  const sessions: SessionView[] = [];
  for (const { value } of db.getRange({ start: end, end: prefix, reverse: true, offset, limit })) {
    if (typeof value === 'object') sessions.push(value as SessionView);
  }
  return { sessions, total: countOf(db, userDid) };
}
