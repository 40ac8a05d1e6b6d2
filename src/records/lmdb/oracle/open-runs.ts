// Thread: any (the chat actor stores and removes them, the front door reads them at start)
// The streamed turns in flight in the LMDB database `oracle-open-runs`, keyed by session (runs/open-runs.ts).
import type { Database } from 'lmdb';
import type { Store } from '../../../store/env.js';
import { versioned, writeAtRevision, type Stored } from '../../../store/revision.js';
import type { OpenRun, OpenRunRepository } from '../../../oracle/runs/open-runs.js';

export function openLmdbOpenRuns(store: Store): OpenRunRepository {
  const db = store.db<Stored<OpenRun>>('oracle-open-runs') as Database<Stored<OpenRun>, string>;
  return {
    get: async (sessionId) => versioned(db.get(sessionId)),
    async put(run) {
      const revision = (db.get(run.sessionId)?.revision ?? 0) + 1;
      await db.put(run.sessionId, { ...run, revision });
    },
    async claim(run, revision) {
      await db.transaction(() => writeAtRevision(db, run.sessionId, run, revision));
    },
    async remove(sessionId, runId) {
      await db.transaction(() => {
        if (db.get(sessionId)?.runId === runId) db.removeSync(sessionId);
      });
    },
    all: async () => [...db.getRange()].map(({ value }) => versioned(value)!.value),
  };
}
