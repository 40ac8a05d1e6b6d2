// Thread: any
// The streamed turns in flight (open runs), one per session, stored (with the message) before
// the agent runs and removed once its `done` is kept. What is left after a node died is a turn cut mid-way: in
// cluster mode the partition's next owner runs it again from the stored message (actor/run-recovery.ts); on one
// node, restarted, it ended `interrupted` (oracle/index.ts). LMDB database `oracle-open-runs`
// (src/records/lmdb/oracle/open-runs.ts), or (cluster mode) the JetStream bucket `<prefix>_oracle_open_runs`
// (src/cluster/records/oracle/open-runs.ts).
import type { Revision, Versioned } from '../../store/revision.js';
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
