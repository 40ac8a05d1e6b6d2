// Thread: main (front door)
// One streamed turn (a run) as its frames came: numbered (SSE `id:` lines, from 1), kept up to a byte bound, and
// written to every reader attached (the POST that started it, and clients re-joining with GET /runs/:id?after=).
// A reader that goes away only detaches: the turn goes on (abort stays explicit). The relay writes into `sink`
// (frame-sink.ts) the frames in batches with the actor's numbers (frame-batch.ts), and at the end the status the
// stream ended with; the log keeps the batches and encodes each once, for every reader attached, and what a
// re-joining reader missed again for it. Its backpressure is that of the attached readers (none attached: none), so a slow reader
// still slows its own generation and a dropped one no longer holds it.
import type { StreamWriter } from '../../http/types.js';
import type { FrameSink } from '../frame-sink.js';
import { encodeBatch, type FrameBatch } from '../frame-batch.js';
import { encodeSseFrame, HEARTBEAT, INTERRUPTED_FRAME, type EndStatus } from '../sse-frames.js';

/**
 * `queued`: taken by the front door, not started by the session's actor yet (it waits for the session's previous
 * turn); `running`; `recovering` (cluster mode, its node died and another runs it again: runs/kept-runs.ts); how it
 * ended: `finished`, `aborted`, `failed`, or `interrupted` (cut by its node's death and not run again).
 */
export type RunStatus = 'queued' | 'running' | 'recovering' | 'finished' | 'aborted' | 'failed' | 'interrupted';

export interface RunInfo {
  runId: string;
  sessionId: string;
  userDid: string;
  /** The X-Request-Id of the POST that started it: the id of the answer, echoed on every re-join. */
  requestId: string;
}

export class RunLog {
  status: RunStatus = 'running';
  endedAt: number | undefined;
  /** Frames kept, a batch (what the relay wrote at once) per entry, oldest first. */
  readonly #batches: Batch[] = [];
  #firstId = 1;
  #nextId = 1;
  /** The `run` frame of a reader not written to yet: it goes out with the first frames (one write). */
  readonly #greeting = new Map<StreamWriter, string>();
  #bytes = 0;
  /** Characters of answer text in the frames kept. */
  #partial = 0;
  #interrupted = false;
  readonly #readers = new Set<StreamWriter>();
  /** Readers that said "full", and what waits for them to drain (or leave). */
  readonly #blocked = new Set<StreamWriter>();
  #drained: (() => void)[] = [];
  readonly #ended: (() => void)[] = [];

  constructor(
    readonly info: RunInfo,
    private readonly maxBytes: number,
    private readonly onSizeChange: (delta: number) => void,
  ) {}

  get bytes(): number {
    return this.#bytes;
  }

  /** The id the next frame gets; `lastId` of what was produced is this minus one. */
  get nextId(): number {
    return this.#nextId;
  }

  /**
   * A run found open after a restart (one node, killed mid-turn): its frames died with the process, so whatever a
   * client has, what follows is `done { status: "interrupted" }`.
   */
  interrupted(): void {
    this.status = 'interrupted';
    this.#interrupted = true;
    this.#end();
  }

  /** Frames with an id above `after`, encoded; undefined when some of them are no longer kept. */
  framesAfter(after: number): string | undefined {
    if (this.#interrupted) return encodeSseFrame(INTERRUPTED_FRAME, after + 1);
    if (after + 1 < this.#firstId) return undefined;
    let text = '';
    for (const { batch } of this.#batches) {
      const skip = after + 1 - batch.first;
      if (skip < batch.events.length) text += encodeBatch(batch, Math.max(skip, 0));
    }
    return text;
  }

  /** Characters of answer text in the frames kept (`message` deltas): the `run` frame's `partialLength`. */
  partialLength(): number {
    return this.#partial;
  }

  /** The `run` frame a reader gets first (not numbered: it is about the connection, not the run). */
  runFrame(partialLength: number): string {
    const { runId, requestId } = this.info;
    return encodeSseFrame({
      event: 'run',
      data: { runId, requestId, resumed: false, partialLength, status: this.status },
    });
  }

  /** Adds a reader (`greeting`: what it gets first, with the next frames); when the run has ended the caller ends it instead. */
  attach(reader: StreamWriter, greeting?: string): void {
    this.#readers.add(reader);
    if (greeting) this.#greeting.set(reader, greeting);
    reader.onClose(() => this.#detach(reader));
  }

  /** Calls `listener` once the run has ended (at once if it has). */
  onEnd(listener: () => void): void {
    if (this.endedAt !== undefined) listener();
    else this.#ended.push(listener);
  }

  /** What the relay writes to: frames are kept and passed on, encoded; heartbeats only passed on. */
  readonly sink: FrameSink = {
    frames: (batch) => this.#append(batch),
    heartbeat: () => this.#send(HEARTBEAT),
    onDrain: (listener) => {
      if (this.#blocked.size === 0) queueMicrotask(listener);
      else this.#drained.push(listener);
    },
    // The run's sink never closes under the relay: a reader leaving detaches (the turn goes on).
    onClose: () => undefined,
    end: (status) => this.#end(status),
    get closed() {
      return false;
    },
  };

  #append(batch: FrameBatch): boolean {
    const count = batch.events.length;
    // Frames the log has already (a batch numbered below the newest) are not kept twice.
    if (count === 0 || batch.first + count <= this.#nextId) return this.#blocked.size === 0;
    const text = encodeBatch(batch);
    if (this.#batches.length === 0) this.#firstId = batch.first;
    this.#nextId = batch.first + count;
    const before = this.#bytes;
    this.#batches.push({ batch, bytes: text.length });
    this.#bytes += text.length;
    this.#partial += batch.answer;
    // Bounded: the oldest batches go first (a re-join that needs them is then refused); the newest always stays.
    while (this.#bytes > this.maxBytes && this.#batches.length > 1) {
      const dropped = this.#batches.shift()!;
      this.#bytes -= dropped.bytes;
      this.#partial -= dropped.batch.answer;
      this.#firstId = dropped.batch.first + dropped.batch.events.length;
    }
    this.onSizeChange(this.#bytes - before);
    return this.#send(text);
  }

  #send(text: string): boolean {
    for (const reader of this.#readers) {
      const greeting = this.#greeting.get(reader);
      if (greeting !== undefined) this.#greeting.delete(reader);
      if (reader.closed) this.#detach(reader);
      else if (!reader.write(greeting === undefined ? text : greeting + text) && !this.#blocked.has(reader)) {
        this.#blocked.add(reader);
        reader.onDrain(() => this.#unblock(reader));
      }
    }
    return this.#blocked.size === 0;
  }

  #unblock(reader: StreamWriter): void {
    if (!this.#blocked.delete(reader) || this.#blocked.size > 0) return;
    for (const listener of this.#drained.splice(0)) listener();
  }

  #detach(reader: StreamWriter): void {
    this.#readers.delete(reader);
    this.#greeting.delete(reader);
    this.#unblock(reader);
  }

  #end(status?: EndStatus): void {
    if (this.endedAt !== undefined) return;
    this.endedAt = Date.now();
    if (status) this.status = status;
    else if (this.status === 'running' || this.status === 'queued') this.status = 'finished';
    for (const reader of this.#readers) if (!reader.closed) reader.end();
    this.#readers.clear();
    this.#blocked.clear();
    for (const listener of this.#drained.splice(0)) listener();
    for (const listener of this.#ended.splice(0)) listener();
  }

  /** Drops the frames (the registry forgets the run). */
  release(): void {
    this.onSizeChange(-this.#bytes);
    this.#bytes = 0;
    this.#partial = 0;
    this.#batches.length = 0;
  }
}

interface Batch {
  batch: FrameBatch;
  /** Its encoded length, `id:` lines included. */
  bytes: number;
}
