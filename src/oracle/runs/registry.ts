// Thread: main (front door)
// The runs of this node's streams (run-log.ts): found by id (GET /runs/:id) and by session (GET /sessions/:id/run).
// Memory is bounded three ways: each run keeps at most RUN_MAX_BYTES of frames, an ended run is kept
// RUN_RETENTION_SECONDS, and past RUNS_MAX_BYTES in all the oldest ended runs go first.
import { RunLog, type RunInfo, type RunStatus } from './run-log.js';

export interface RunLimits {
  /** Frames one run keeps (bytes); the oldest go past it. */
  maxBytes: number;
  /** How long an ended run stays re-joinable. */
  retentionMs: number;
  /** Frames all runs keep together; past it ended runs are forgotten, oldest first. */
  totalBytes: number;
}

export class RunRegistry {
  readonly #runs = new Map<string, RunLog>();
  /** Session id -> its newest run. */
  readonly #bySession = new Map<string, RunLog>();
  #bytes = 0;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly limits: RunLimits) {}

  /** Starts keeping a run (`queued` until its actor opens the stream). */
  start(info: RunInfo, status: RunStatus = 'running'): RunLog {
    const run = new RunLog(info, this.limits.maxBytes, (delta) => {
      this.#bytes += delta;
      if (delta > 0 && this.#bytes > this.limits.totalBytes) this.#evict();
    });
    run.status = status;
    this.#runs.set(info.runId, run);
    this.#bySession.set(info.sessionId, run);
    run.onEnd(() => {
      this.#sweeper ??= setInterval(() => this.#sweep(), Math.min(this.limits.retentionMs, 10_000)).unref();
    });
    return run;
  }

  /** Keeps a run found open after a restart as ended `interrupted` (run-log.ts), re-joinable for its retention. */
  interrupted(info: RunInfo): void {
    this.start(info).interrupted();
  }

  /** The run of that id, when it is the user's and still kept. */
  get(runId: string, userDid: string): RunLog | undefined {
    const run = this.#runs.get(runId);
    return run && run.info.userDid === userDid && !this.#expired(run) ? run : undefined;
  }

  /** The session's run in progress, when it is the user's. */
  running(sessionId: string, userDid: string): RunLog | undefined {
    const run = this.#bySession.get(sessionId);
    return run && run.info.userDid === userDid && run.endedAt === undefined ? run : undefined;
  }

  /** Forgets a run at once (cluster mode: its node died, the runs stream has it from here on). */
  forget(runId: string): void {
    const run = this.#runs.get(runId);
    if (run) this.#forget(run);
  }

  /** Runs and bytes kept (tests, metrics). */
  get size(): { runs: number; bytes: number } {
    return { runs: this.#runs.size, bytes: this.#bytes };
  }

  stop(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #expired(run: RunLog): boolean {
    return run.endedAt !== undefined && Date.now() - run.endedAt >= this.limits.retentionMs;
  }

  #forget(run: RunLog): void {
    this.#runs.delete(run.info.runId);
    if (this.#bySession.get(run.info.sessionId) === run) this.#bySession.delete(run.info.sessionId);
    run.release();
  }

  #sweep(): void {
    let ended = 0;
    for (const run of this.#runs.values()) {
      if (this.#expired(run)) this.#forget(run);
      else if (run.endedAt !== undefined) ended++;
    }
    if (ended === 0) this.stop();
  }

  /** Oldest ended runs first (the map keeps insertion order, and runs end roughly in the order they start). */
  #evict(): void {
    for (const run of this.#runs.values()) {
      if (this.#bytes <= this.limits.totalBytes) return;
      if (run.endedAt !== undefined) this.#forget(run);
    }
  }
}
