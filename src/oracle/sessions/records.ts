// Thread: any
// A chat session's record, what clients see of it, and the pure rules around them
// (titles, timestamps). Stored behind SessionRepository (repository.ts).

export interface SessionRecord {
  sessionId: string;
  userDid: string;
  oracleDid: string;
  oracleName: string;
  title: string;
  /** Milliseconds since the epoch, with sub-millisecond precision (see preciseNow). */
  createdAt: number;
  lastUpdatedAt: number;
  /**
   * Bytes of the transcript's entries (bounds.ts entryBytes), moved in the same commit as each turn's entries, so
   * the bound on them is checked against what is stored. Absent on records stored before it was kept: counted from 0.
   */
  transcriptBytes?: number;
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

export const UNTITLED = 'Untitled';
const TITLE_MAX = 60;

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

/** A title from the first message: its first line, at most 60 characters, cut at a word. */
export function titleFrom(message: string): string {
  const line = message.trim().split('\n', 1)[0].replace(/\s+/g, ' ');
  if (line.length <= TITLE_MAX) return line || UNTITLED;
  const cut = line.slice(0, TITLE_MAX);
  const space = cut.lastIndexOf(' ');
  return `${space > 20 ? cut.slice(0, space) : cut}…`;
}
