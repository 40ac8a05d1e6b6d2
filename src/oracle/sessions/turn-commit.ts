// Thread: any
// How a chat turn is stored. A turn appends its transcript entries (create-only
// numbers) and moves the session record (revision-checked); on a conflict in either, nothing is written.
import type { Versioned } from '../../store/revision.js';
import type { SessionRecord } from './records.js';
import type { SessionRepository } from './repository.js';
import type { TranscriptEntry } from './transcript.js';
import type { TranscriptRepository } from './transcript-repository.js';

export interface SessionStores {
  readonly sessions: SessionRepository;
  readonly transcripts: TranscriptRepository;
  /**
   * Entries numbered `from` onwards, then the record at `revision` moved to `record`; the record's new
   * revision. RevisionConflictError, and nothing written, when a number is taken or the record moved.
   */
  commitTurn(
    record: SessionRecord,
    revision: number,
    from: number,
    entries: readonly TranscriptEntry[],
  ): Promise<Versioned<SessionRecord>>;
  /**
   * Throws (DomainError `storage_unavailable`) when a turn could not be stored now (LMDB: the disk below its free
   * space floor), so the turn is refused before it streams anything.
   */
  assertWritable?(): void;
}
