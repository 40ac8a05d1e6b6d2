// Thread: any, cluster mode (runs in the actor hosts; both roots load it with the record families)
// Writes one run's frames to the runs stream (run-stream.ts) as the actor produces them, numbered as the
// front door's run log numbers the same frames, so a re-join through any node continues where the client was. One
// publish is in flight at a time; what the actor produces meanwhile goes in the next one (a quorum fsync per batch,
// not per delta). Past the run's byte bound the oldest batches are purged. A write's `stored` callback runs once its
// batch was acknowledged (or failed), in the order written: the frame sender hands frames to the front door then.
// `settled` resolves once everything written was acknowledged (or failed: a lost batch is a gap that readers see,
// and re-join past).
import type { Logger } from '../../../../base/log.js';
import type { FrameBatch } from '../../../../oracle/frame-batch.js';
import type { RunFrameWriter } from '../../../../oracle/runs/kept-runs.js';
import type { RunInfo } from '../../../../oracle/runs/run-log.js';
import { SequenceOut } from '../../../../runtime/sequenced-stream.js';
import type { RunStream } from './run-stream.js';

export class RunWriter implements RunFrameWriter {
  /** The numbers of the frames published (runtime/sequenced-stream.ts). */
  readonly #ids: SequenceOut;
  /** Frames queued, numbered when they are published. */
  #pending: FrameBatch = emptyBatch();
  #pendingStored: (() => void)[] = [];
  #inFlight: Promise<void> | undefined;
  #opening = false;
  /** Sizes of the batches kept, oldest first (for the byte bound). */
  readonly #kept: number[] = [];
  #keptBytes = 0;

  constructor(
    private readonly stream: RunStream,
    readonly info: RunInfo,
    private readonly log: Logger,
    /** The id of the next frame (a recovered run continues its numbering). */
    nextId = 1,
  ) {
    this.#ids = new SequenceOut(nextId);
  }

  /** Says whose run it is, before its first frame (a recovery says it again, unchanged). */
  open(): void {
    this.#opening = true;
    this.#inFlight ??= this.#drain();
  }

  /** The id the next frame written gets (the frame sender numbers its frames from it). */
  get nextId(): number {
    return this.#ids.next + this.#pending.events.length;
  }

  /** Queues a batch's frames, numbered on from the last (as the frame sender numbers them); `stored` runs once kept. */
  write(batch: FrameBatch, stored?: () => void): void {
    if (batch.events.length === 0 && !stored) return;
    const pending = this.#pending;
    for (let i = 0; i < batch.events.length; i++) {
      pending.events.push(batch.events[i]!);
      pending.data.push(batch.data[i]!);
    }
    pending.answer += batch.answer;
    if (batch.status) pending.status = batch.status;
    if (stored) this.#pendingStored.push(stored);
    this.#inFlight ??= this.#drain();
  }

  /** Resolves once every frame queued so far is acknowledged (or failed). */
  async settled(): Promise<void> {
    while (this.#inFlight) await this.#inFlight;
  }

  async #drain(): Promise<void> {
    try {
      if (this.#opening) {
        this.#opening = false;
        await this.stream.connection.js
          .publish(this.stream.subject(this.info.runId, 'open'), JSON.stringify(this.info))
          .catch((error: unknown) => this.log.warn({ err: error, runId: this.info.runId }, 'a run was not opened'));
      }
      while (this.#pending.events.length > 0 || this.#pendingStored.length > 0) {
        const batch = { ...this.#pending, first: this.#ids.take(this.#pending.events.length) };
        const stored = this.#pendingStored;
        this.#pending = emptyBatch();
        this.#pendingStored = [];
        if (batch.events.length > 0) await this.#publish(batch);
        for (const callback of stored) callback();
        await this.#bound().catch((error: unknown) =>
          this.log.warn({ err: error, runId: this.info.runId }, 'a run was not trimmed to its bound'),
        );
      }
    } finally {
      this.#inFlight = undefined;
    }
  }

  async #publish(batch: FrameBatch): Promise<void> {
    const body = JSON.stringify(batch);
    try {
      await this.stream.connection.js.publish(this.stream.subject(this.info.runId, 'f'), body);
      this.#kept.push(body.length);
      this.#keptBytes += body.length;
    } catch (error) {
      this.log.warn({ err: error, runId: this.info.runId }, 'a run batch was not stored');
    }
  }

  /** Purges the oldest batches past the run's byte bound; the newest always stays. */
  async #bound(): Promise<void> {
    if (this.#keptBytes <= this.stream.limits.maxBytes || this.#kept.length < 2) return;
    while (this.#keptBytes > this.stream.limits.maxBytes && this.#kept.length > 1)
      this.#keptBytes -= this.#kept.shift()!;
    await this.stream.connection.jsm.streams.purge(this.stream.name, {
      filter: this.stream.subject(this.info.runId, 'f'),
      keep: this.#kept.length,
    });
  }
}

function emptyBatch(): FrameBatch {
  return { first: 0, events: [], data: [], answer: 0 };
}
