// Thread: any
// Where transcripts live. Entries are numbered from 0 in the order they were said;
// a number is written once (create-only), so a stale writer cannot overwrite what a newer one appended.
// Reads are pages, in either direction, so nothing needs a transcript whole.
import type { TranscriptEntry } from './transcript.js';

export interface TranscriptPage {
  entries: TranscriptEntry[];
  /** Where the following page in the same direction starts (`from` or `before`); absent after the last. */
  next?: number;
}

export interface TranscriptRepository {
  /** Entries numbered `from` onwards; RevisionConflictError, and nothing written, when one of the numbers is taken. */
  append(sessionId: string, from: number, entries: readonly TranscriptEntry[]): Promise<void>;
  /** Oldest first, from entry number `from`. */
  read(sessionId: string, page: { from: number; limit: number }): Promise<TranscriptPage>;
  /** Newest first, entries numbered below `before` (absent: from the newest). */
  readNewest(sessionId: string, page: { before?: number; limit: number }): Promise<TranscriptPage>;
  /** How many entries the session has: the number the next one gets. */
  length(sessionId: string): Promise<number>;
  /** Removes every entry of the session. */
  remove(sessionId: string): Promise<void>;
}
