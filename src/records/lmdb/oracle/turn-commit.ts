// Thread: any (the chat actor writes)
// The chat repositories in LMDB with a turn stored as one transaction,
// so a turn is one commit (one sync) instead of two, and a conflict on the record leaves no entries behind.
import type { Store } from '../../../store/env.js';
import { openLmdbSessionRepository } from './sessions.js';
import { openLmdbTranscriptRepository } from './transcripts.js';
import type { SessionStores } from '../../../oracle/sessions/turn-commit.js';

export function openLmdbSessionStores(store: Store): SessionStores {
  const sessions = openLmdbSessionRepository(store);
  const transcripts = openLmdbTranscriptRepository(store);
  return {
    sessions,
    transcripts,
    // lmdb-js transactions span the environment's databases: both checks first, then both writes.
    commitTurn: (record, revision, from, entries) =>
      store.root.transaction(() => {
        const append = transcripts.stageAppend(record.sessionId, from, entries);
        const update = sessions.stageUpdate(record, revision);
        append();
        return update();
      }),
    assertWritable: () => store.assertWritable(),
  };
}
