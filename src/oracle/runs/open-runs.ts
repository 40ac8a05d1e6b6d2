// Thread: any
// The streamed turns in flight (open runs), one per session, stored (with the message) before
// the agent runs and removed once its `done` is kept. What is left after a node died is a turn cut mid-way: in
// cluster mode the partition's next owner runs it again from the stored message (actor/run-recovery.ts); on one
// node, restarted, it ended `interrupted` (oracle/index.ts). LMDB database `oracle-open-runs`, or (cluster mode) the JetStream bucket
// `<prefix>_oracle_open_runs` (src/cluster/records/oracle/open-runs.ts).
import type { Database } from 'lmdb';
import type { Store } from '../../store/env.js';
import {
  RevisionConflictError,
  versioned,
  writeIfRevision,
  type Revision,
  type Stored,
  type Versioned,
} from '../../store/revision.js';
import type { TurnMessage } from '../chat/chat-protocol.js';

export interface OpenRun {
  runId: string;
  sessionId: string;
  userDid: string;
  requestId: string;
  /** The id its human message gets in the transcript (committed with the answer: a recovery checks for it). */
  humanId: string;
  /** The message as the front door sent it: what a recovery runs again. */
  turn: TurnMessage;
  /** Attempts at the turn so far (1: the first). */
  attempt: number;
}

export interface OpenRunRepository {
  get(sessionId: string): Promise<Versioned<OpenRun> | undefined>;
  /** Stores the session's open run (a session runs one turn at a time: the last one stored wins). */
  put(run: OpenRun): Promise<void>;
  /** Replaces the run read at `revision` (a recovery's claim); RevisionConflictError when it moved. */
  claim(run: OpenRun, revision: Revision): Promise<void>;
  /** Removes the session's open run when it is still `runId`. */
  remove(sessionId: string, runId: string): Promise<void>;
  /** Every open run (few: turns in flight). */
  all(): Promise<OpenRun[]>;
}

export function openLmdbOpenRuns(store: Store): OpenRunRepository {
  const db = store.db<Stored<OpenRun>>('oracle-open-runs') as Database<Stored<OpenRun>, string>;
  return {
    get: async (sessionId) => versioned(db.get(sessionId)),
    async put(run) {
      const revision = (db.get(run.sessionId)?.revision ?? 0) + 1;
      await db.put(run.sessionId, { ...run, revision });
    },
    async claim(run, revision) {
      const written = await db.transaction(() => writeIfRevision(db, run.sessionId, run, revision));
      if (written === undefined) throw new RevisionConflictError(run.sessionId, revision);
    },
    async remove(sessionId, runId) {
      await db.transaction(() => {
        if (db.get(sessionId)?.runId === runId) db.removeSync(sessionId);
      });
    },
    all: async () => [...db.getRange()].map(({ value }) => versioned(value)!.value),
  };
}
