// Thread: main (front door)
// One streamed turn (a run) as its frames came: numbered (SSE `id:` lines, from 1), kept up to a byte bound, and
// written to every reader attached (the POST that started it, and clients re-joining with GET /runs/:id?after=).
// A reader that goes away only detaches: the turn goes on (abort stays explicit). The relay writes into `writer`,
// a StreamWriter whose backpressure is that of the attached readers (none attached: none), so a slow reader still
// slows its own generation and a dropped one no longer holds it.
import type { StreamWriter } from '../../http/types.js';
import { HEARTBEAT } from '../routes/stream-relay.js';

/**
 * `queued`: taken by the front door, not started by the session's actor yet (it waits for the session's previous
 * turn); `running`; `recovering` (cluster mode, its node died and another runs it again: run-reader.ts); how it
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

const DONE_PREFIX = 'event: done\ndata: ';
/** How a run cut and not run again ends (client SDK 1.4.0 reads `status: "interrupted"`). */
export const INTERRUPTED_DONE = `${DONE_PREFIX}${JSON.stringify({ status: 'interrupted', interrupted: true })}\n\n`;
const MESSAGE_PREFIX = 'event: message\ndata: ';

export class RunLog {
  status: RunStatus = 'running';
  endedAt: number | undefined;
  /** Frames kept, with their `id:` lines, a batch (what the relay wrote at once) per entry, oldest first. */
  readonly #batches: Batch[] = [];
  #firstId = 1;
  #nextId = 1;
  /** The `run` frame of a reader not written to yet: it goes out with the first frames (one write). */
  readonly #greeting = new Map<StreamWriter, string>();
  #bytes = 0;
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

  /** Frames with an id above `after`, joined; undefined when some of them are no longer kept. */
  framesAfter(after: number): string | undefined {
    if (this.#interrupted) return `id: ${after + 1}\n${INTERRUPTED_DONE}`;
    if (after + 1 < this.#firstId) return undefined;
    let text = '';
    for (const batch of this.#batches) {
      const last = batch.firstId + batch.count - 1;
      if (last <= after) continue;
      text +=
        batch.firstId > after
          ? batch.text
          : framesOf(batch.text)
              .slice(after + 1 - batch.firstId)
              .join('');
    }
    return text;
  }

  /** Characters of answer text in the frames kept (`message` deltas): the `run` frame's `partialLength`. */
  partialLength(): number {
    let length = 0;
    for (const frame of this.#batches.flatMap((batch) => framesOf(batch.text))) {
      const at = frame.indexOf(MESSAGE_PREFIX);
      if (at < 0) continue;
      const data = JSON.parse(frame.slice(at + MESSAGE_PREFIX.length)) as { content?: unknown };
      if (typeof data.content === 'string') length += data.content.length;
    }
    return length;
  }

  /** The `run` frame a reader gets first (not numbered: it is about the connection, not the run). */
  runFrame(partialLength: number): string {
    const { runId, requestId } = this.info;
    return `event: run\ndata: ${JSON.stringify({ runId, requestId, resumed: false, partialLength, status: this.status })}\n\n`;
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

  /** What the relay writes to: frames are numbered, kept and passed on; heartbeats only passed on. */
  readonly writer: StreamWriter = {
    write: (chunk) => (chunk === HEARTBEAT ? this.#send(chunk) : this.#append(chunk)),
    onDrain: (listener) => {
      if (this.#blocked.size === 0) queueMicrotask(listener);
      else this.#drained.push(listener);
    },
    // The run's writer never closes under the relay: a reader leaving detaches (the turn goes on).
    onClose: () => undefined,
    end: () => this.#end(),
    get closed() {
      return false;
    },
  };

  #append(chunk: string): boolean {
    // Each frame ends with a blank line and holds none (its data is one line of JSON): number them in one pass.
    const firstId = this.#nextId;
    let numbered = '';
    for (let start = 0; start < chunk.length; ) {
      const end = chunk.indexOf('\n\n', start);
      const stop = end < 0 ? chunk.length : end + 2;
      numbered += `id: ${this.#nextId++}\n${chunk.slice(start, stop)}`;
      start = stop;
    }
    const done = chunk.indexOf(DONE_PREFIX);
    if (done >= 0)
      this.status = statusOf(chunk.slice(done + DONE_PREFIX.length, chunk.indexOf('\n', done + DONE_PREFIX.length)));
    const before = this.#bytes;
    this.#batches.push({ firstId, count: this.#nextId - firstId, text: numbered });
    this.#bytes += numbered.length;
    // Bounded: the oldest batches go first (a re-join that needs them is then refused); the newest always stays.
    while (this.#bytes > this.maxBytes && this.#batches.length > 1) {
      const dropped = this.#batches.shift()!;
      this.#bytes -= dropped.text.length;
      this.#firstId = dropped.firstId + dropped.count;
    }
    this.onSizeChange(this.#bytes - before);
    return this.#send(numbered);
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

  #end(): void {
    if (this.endedAt !== undefined) return;
    this.endedAt = Date.now();
    if (this.status === 'running' || this.status === 'queued') this.status = 'finished';
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
    this.#batches.length = 0;
  }
}

interface Batch {
  firstId: number;
  count: number;
  /** The frames with their `id:` lines. */
  text: string;
}

/** The frames of a batch, each with its blank line. */
function framesOf(text: string): string[] {
  return text.split(/(?<=\n\n)/);
}

function statusOf(data: string): RunStatus {
  try {
    const status = (JSON.parse(data) as { status?: unknown }).status;
    return status === 'aborted' || status === 'failed' || status === 'interrupted' ? status : 'finished';
  } catch {
    return 'finished';
  }
}
