// Thread: any (pure)
// The bounds on what one user may store through the chat (sessions held, bytes of
// one transcript) and how a transcript's size is measured. Configured by CHAT_SESSIONS_PER_USER_MAX and
// CHAT_TRANSCRIPT_MAX_BYTES (config.ts); enforced where the writes are committed (the repositories' create, the
// session state's commit), so both storage engines hold them.
import type { TranscriptEntry } from './transcript.js';

export interface ChatBounds {
  /** Sessions one user may hold at once. */
  readonly sessionsPerUser: number;
  /** Bytes one session's transcript may hold (entryBytes of its entries). */
  readonly transcriptBytes: number;
}

/** What an entry counts against its transcript's bound: its JSON's UTF-8 bytes (what a full read answers, and more). */
export function entryBytes(entry: TranscriptEntry): number {
  return Buffer.byteLength(JSON.stringify(entry));
}

export function entriesBytes(entries: readonly TranscriptEntry[]): number {
  let total = 0;
  for (const entry of entries) total += entryBytes(entry);
  return total;
}
