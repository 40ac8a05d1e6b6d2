// Thread: any (that writes; the actor hosts use it for USSD steps)
// Writes queued during one event-loop turn are
// applied at the turn's end in ONE synchronous LMDB transaction on this thread, committed and synced to disk
// before any of their promises resolves: a group commit without a second thread.
//
// Why not lmdb-js's asynchronous writes, which also group a turn's writes: their transaction runs on libuv's pool,
// which polls for more instructions with timed waits and hands each result back to this thread, so every transaction
// wakes two or three threads several times; on this project's 2-core VM a wake-up costs 30–70 µs of CPU. A
// synchronous transaction sleeps only in its two syncs (the data's and the meta page's). Measured on a USSD step
// (bench/README.md, "Session 7"): the process's CPU per step fell by a fifth in process, and by 1–20% in the bench
// (the medians of five series of pairs). The cost: this thread runs nothing else while its transaction syncs (about a
// millisecond under the bench's load here; a slower disk's sync latency on one), so the steps that arrive meanwhile
// wait for the next one.
import { TransactionFlags, type RootDatabase } from 'lmdb';
import { isStorageUnavailable } from './write-guard.js';
import { type Context, tracing } from '../telemetry/index.js';

interface Queued {
  apply(): unknown;
  resolve(result: unknown): void;
  reject(error: unknown): void;
  /** Tracing on: the writer's context (its commit's span is a child of the turn's first traced writer). */
  trace?: Context;
}

/** Synced before returning (not NO_SYNC_FLUSH), and abortable, so a write that throws leaves nothing behind. */
const SYNCED = TransactionFlags.ABORTABLE | TransactionFlags.SYNCHRONOUS_COMMIT;

export class TurnCommit {
  #queued: Queued[] = [];
  readonly #committed: ((seconds: number) => void)[] = [];

  constructor(private readonly root: RootDatabase) {}

  /**
   * Runs `apply` inside the transaction of this turn's end (it may read and write any database of the root,
   * synchronously, and nothing else: it runs again, alone, when its turn's transaction fails) and resolves with
   * what it returned once that transaction is on disk. A write whose `apply` throws, or whose commit fails, is
   * refused with that error and leaves nothing behind; the other writes of its turn still commit. `trace`: the
   * writer's context (tracing on, in a recorded trace), for the commit's span.
   */
  write<T>(apply: () => T, trace?: Context): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queued: Queued = { apply, resolve: resolve as (result: unknown) => void, reject };
      if (trace) queued.trace = trace;
      if (this.#queued.push(queued) === 1) setImmediate(this.#commitTurn);
    });
  }

  /** `listener` is called with each transaction's duration, from its start to its synced commit. */
  onCommitted(listener: (seconds: number) => void): void {
    this.#committed.push(listener);
  }

  readonly #commitTurn = () => {
    const queued = this.#queued;
    this.#queued = [];
    this.#commit(queued);
  };

  #commit(writes: Queued[]): void {
    const started = performance.now();
    let applied = 0;
    let results: unknown[];
    try {
      results = this.root.transactionSync(() => {
        const done = writes.map((write) => write.apply());
        applied = performance.now();
        return done;
      }, SYNCED);
    } catch (error) {
      // One faulty write must not refuse the others of its turn (another caller's step): each commits on its own.
      // A refusal of the whole store (a full disk, write-guard.ts) refuses them all alike.
      if (writes.length === 1 || isStorageUnavailable(error)) for (const write of writes) write.reject(error);
      else for (const write of writes) this.#commit([write]);
      return;
    }
    const ended = performance.now();
    const seconds = (ended - started) / 1000;
    if (tracing) traceCommit(writes, started, applied, ended);
    for (const listener of this.#committed) listener(seconds);
    for (const [i, write] of writes.entries()) write.resolve(results[i]);
  }
}

/**
 * The span of a synced commit, under the turn's first traced writer and linked to the others' traces: how many
 * records the transaction held and how long its commit and sync took after the writes were applied.
 */
function traceCommit(writes: Queued[], started: number, applied: number, ended: number): void {
  const t = tracing!;
  const traced = writes.filter((write) => write.trace);
  if (traced.length === 0) return;
  // On the SDK's clock (wall time when the span is made, performance.now() differences before it).
  const wall = Date.now() - (performance.now() - ended);
  const span = t.start(
    'lmdb.commit',
    'internal',
    { 'db.system': 'lmdb', 'lmdb.records': writes.length, 'lmdb.sync_ms': ended - applied },
    traced[0].trace,
    wall - (ended - started),
  );
  for (const write of traced.slice(1)) {
    const link = t.spanContextOf(write.trace!);
    if (link) span.addLink({ context: link });
  }
  span.end(wall);
}
