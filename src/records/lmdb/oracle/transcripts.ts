// Thread: any (the chat actor appends and reads)
// Transcripts in the LMDB database `oracle-transcripts`,
// one entry per message, keyed so that a session's entries are one ordered range:
//   <sessionId>|<number, 10 digits> -> TranscriptEntry
import type { Store } from '../../../store/env.js';
import { RevisionConflictError } from '../../../store/revision.js';
import type { TranscriptEntry } from '../../../oracle/sessions/transcript.js';
import type { TranscriptPage, TranscriptRepository } from '../../../oracle/sessions/transcript-repository.js';
import { freeingSpace } from '../../../store/write-guard.js';

/** The LMDB repository, plus its append as a step of a larger transaction (turn-commit.ts). */
export interface LmdbTranscriptRepository extends TranscriptRepository {
  /**
   * Inside a write transaction: checks that every number is free (RevisionConflictError otherwise) and
   * answers the writes, to make once every other check of the transaction has passed.
   */
  stageAppend(sessionId: string, from: number, entries: readonly TranscriptEntry[]): () => void;
}

const WIDTH = 10;
const prefixOf = (sessionId: string) => `${sessionId}|`;
const keyOf = (sessionId: string, n: number) => `${prefixOf(sessionId)}${String(n).padStart(WIDTH, '0')}`;
const numberOf = (key: string) => Number(key.slice(-WIDTH));

export function openLmdbTranscriptRepository(store: Store): LmdbTranscriptRepository {
  const db = store.db<TranscriptEntry>('oracle-transcripts');

  /**
   * Reads one key past the page to know whether another follows; only the page's values are decoded (an entry may
   * be hundreds of kilobytes). Keys and values are read in one synchronous pass: one snapshot.
   */
  const page = (keys: Iterable<string>, limit: number, nextOf: (n: number) => number): TranscriptPage => {
    const entries: TranscriptEntry[] = [];
    for (const key of keys) {
      if (entries.length === limit) return { entries, next: nextOf(numberOf(key)) };
      const value = db.get(key);
      if (value !== undefined) entries.push(value);
    }
    return { entries };
  };

  // Every number checked before anything is written: a callback that throws mid-way in lmdb-js's batch
  // keeps the writes it made.
  const stageAppend = (sessionId: string, from: number, entries: readonly TranscriptEntry[]) => {
    const keys = entries.map((_, i) => keyOf(sessionId, from + i));
    const taken = keys.find((key) => db.doesExist(key));
    if (taken !== undefined) throw new RevisionConflictError(taken, undefined);
    return () => {
      for (const [i, key] of keys.entries()) db.put(key, entries[i]);
    };
  };

  return {
    stageAppend,

    append: (sessionId, from, entries) => db.transaction(() => stageAppend(sessionId, from, entries)()),

    async read(sessionId, { from, limit }) {
      const keys = db.getKeys({
        start: keyOf(sessionId, from),
        end: `${prefixOf(sessionId)}\uffff`,
        limit: limit + 1,
      });
      return page(keys, limit, (n) => n);
    },

    async readNewest(sessionId, { before, limit }) {
      if (before !== undefined && before <= 0) return { entries: [] };
      const start = before === undefined ? `${prefixOf(sessionId)}\uffff` : keyOf(sessionId, before - 1);
      return page(
        db.getKeys({ start, end: prefixOf(sessionId), reverse: true, limit: limit + 1 }),
        limit,
        (n) => n + 1,
      );
    },

    async length(sessionId) {
      for (const key of db.getKeys({
        start: `${prefixOf(sessionId)}\uffff`,
        end: prefixOf(sessionId),
        reverse: true,
        limit: 1,
      })) {
        return numberOf(key) + 1;
      }
      return 0;
    },

    async remove(sessionId) {
      // Past the free-space floor (write-guard.ts): a delete frees pages.
      await freeingSpace(() =>
        db.transaction(() => {
          for (const key of db.getKeys({ start: prefixOf(sessionId), end: `${prefixOf(sessionId)}\uffff` }))
            db.remove(key);
        }),
      );
    },
  };
}
