// Runs on: the main thread (front door).
// One streamed turn (a run) as its frames came: numbered (SSE `id:` lines, from 1), kept up to a byte bound, and
// written to every reader attached (the POST that started it, and clients re-joining with GET /runs/:id?after=).
// A reader that goes away only detaches: the turn goes on (abort stays explicit). The relay writes into `writer`,
// a StreamWriter whose backpressure is that of the attached readers (none attached: none), so a slow reader still
// slows its own generation and a dropped one no longer holds it.
import type { StreamWriter } from '../../http/types.js';
import { HEARTBEAT } from '../routes/stream-relay.js';

export type RunStatus = 'running' | 'finished' | 'aborted' | 'failed';

export interface RunInfo {
  runId: string;
  sessionId: string;
  userDid: string;
  /** The X-Request-Id of the POST that started it: the id of the answer, echoed on every re-join. */
  requestId: string;
}

const DONE_PREFIX = 'event: done\ndata: ';
const MESSAGE_PREFIX = 'event: message\ndata: ';

export class RunLog {
  status: RunStatus = 'running';
  endedAt: number | undefined;
  /** Frames kept, each with its `id:` line; frames[0] has id `firstId`. */
  readonly #frames: string[] = [];
  #firstId = 1;
  #bytes = 0;
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
    return this.#firstId + this.#frames.length;
  }

  /** Frames with an id above `after`, joined; undefined when some of them are no longer kept. */
  framesAfter(after: number): string | undefined {
    if (after + 1 < this.#firstId) return undefined;
    return this.#frames.slice(Math.max(0, after + 1 - this.#firstId)).join('');
  }

  /** Characters of answer text in the frames kept (`message` deltas): the `run` frame's `partialLength`. */
  partialLength(): number {
    let length = 0;
    for (const frame of this.#frames) {
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

  /** Adds a reader; when the run has ended the caller ends it instead. */
  attach(reader: StreamWriter): void {
    this.#readers.add(reader);
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
    let numbered = '';
    let added = 0;
    for (const frame of chunk.split('\n\n')) {
      if (!frame) continue;
      const text = `id: ${this.nextId}\n${frame}\n\n`;
      this.#frames.push(text);
      added += text.length;
      numbered += text;
      if (frame.startsWith(DONE_PREFIX)) this.status = statusOf(frame.slice(DONE_PREFIX.length));
    }
    const before = this.#bytes;
    this.#bytes += added;
    // Bounded: the oldest frames go first (a re-join that needs them is then refused).
    while (this.#bytes > this.maxBytes && this.#frames.length > 1) {
      this.#bytes -= this.#frames.shift()!.length;
      this.#firstId++;
    }
    this.onSizeChange(this.#bytes - before);
    return this.#send(numbered);
  }

  #send(text: string): boolean {
    for (const reader of this.#readers) {
      if (reader.closed) this.#detach(reader);
      else if (!reader.write(text) && !this.#blocked.has(reader)) {
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
    this.#unblock(reader);
  }

  #end(): void {
    if (this.endedAt !== undefined) return;
    this.endedAt = Date.now();
    if (this.status === 'running') this.status = 'finished';
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
    this.#frames.length = 0;
  }
}

function statusOf(data: string): RunStatus {
  try {
    const status = (JSON.parse(data) as { status?: unknown }).status;
    return status === 'aborted' || status === 'failed' ? status : 'finished';
  } catch {
    return 'finished';
  }
}
