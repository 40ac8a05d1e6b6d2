// Thread: any
// The port of kept runs: in cluster mode a run's frames are kept where every node reads them, so that the run
// outlives the node that streamed it. The face declares what it needs of them here; the engine (a JetStream stream,
// src/cluster/records/oracle/runs/) comes with the oracle's record families (OracleRepositories.keptRuns), picked by
// the composition root. One node keeps no runs but in its front door's run log (run-log.ts).
import type { StreamWriter } from '../../http/types.js';
import type { Logger } from '../../base/log.js';
import type { FrameBatch } from '../frame-batch.js';
import type { OpenRunRepository } from './open-runs.js';
import type { RunRegistry } from './registry.js';
import type { RunInfo } from './run-log.js';

export interface RunStreamLimits {
  /** Frames one run keeps (bytes). */
  maxBytes: number;
  /** How long an ended run stays re-joinable. */
  retentionMs: number;
  /** Frames all runs keep together (bytes). */
  totalBytes: number;
}

/** Writes one run's frames where they are kept, numbered on from the last (actor host). */
export interface RunFrameWriter {
  readonly info: RunInfo;
  /** Says whose run it is, before its first frame (a recovery says it again, unchanged). */
  open(): void;
  /** The id the next frame written gets. */
  readonly nextId: number;
  /** Queues a batch's frames (numbered on from the last); `stored` runs once they are kept (or failed), in order. */
  write(batch: FrameBatch, stored?: () => void): void;
  /** Resolves once every frame queued so far is kept (or failed). */
  settled(): Promise<void>;
}

/** Where the turns of an actor host keep their runs. */
export interface RunFrameStore {
  /** A writer of run `info`'s frames; `nextId` for a recovered run (default 1). */
  writer(info: RunInfo, nextId?: number): RunFrameWriter;
  /** The run's opening (undefined: none kept), the id its next frame gets (1 when none) and whether it ended. */
  next(runId: string): Promise<{ info: RunInfo | undefined; id: number; ended: boolean }>;
}

export interface RunReadOptions {
  heartbeatMs: number;
  probeMs: number;
  /** How long a run may be quiet with no word that it still runs before the answer ends (the client re-joins). */
  giveUpMs: number;
  /** Whether the run still runs (its actor answers for it); asked while it is quiet. */
  onQuiet(info: RunInfo): Promise<boolean>;
}

export interface KeptRun {
  info: RunInfo;
  /** Writes the run to `writer` until `done`, a gap or a long silence; stops when `writer` closes. */
  pipe(writer: StreamWriter): void;
}

/** The front door's reading of kept runs: re-joins through any node, and who holds a session's run. */
export interface KeptRuns {
  /** The run kept, from frame `after` on; undefined when it is not this user's or not kept. */
  join(runId: string, userDid: string, after: number): Promise<KeptRun | undefined>;
  /** The session's run in progress on another node (none within `waitMs`), or its open run. */
  running(sessionId: string, userDid: string, waitMs?: number): Promise<{ runId: string; status: string } | undefined>;
  stop(): void;
}

/** What the front door's kept runs read with: this node's runs and open runs, and how a re-join reads. */
export interface KeptRunsContext {
  registry: RunRegistry;
  openRuns: OpenRunRepository;
  reading: RunReadOptions;
  log: Logger;
}

/** The engine keeping runs: opened by an actor host for its turns, by the front door for its readers. */
export interface RunKeeping {
  /** `log` hears of frames that were not kept. */
  frames(limits: RunStreamLimits, log: Logger): Promise<RunFrameStore>;
  front(limits: RunStreamLimits, context: KeptRunsContext): Promise<KeptRuns>;
}
