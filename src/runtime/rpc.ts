// Thread: any
// A lean typed RPC between the main thread and an actor host, over a batching endpoint.
// Hand-written instead of comlink on the hot path: comlink gave every call a UUID string, wrapped each argument
// and the answer in wire-value objects and went through proxies (about 10% of the main thread per USSD step,
// plus the garbage). Here a call is one small array, `[id, method, args]`, its answer `[id, 0, value]` or
// `[id, 1, error]`, with ids numbered per client. Deadlines are the caller's business (they travel as arguments);
// the client bounds how long it waits for an answer, and a call given its deadline's signal rejects with the
// signal's reason when it fires (the answer's slot stays counted until the answer or its grace: `settled`).
import type { TransferListItem } from 'node:worker_threads';
import type { Endpoint } from './batching-endpoint.js';
import { abortReason } from './deadline-signals.js';
import { fromWire, toWire, type WireError } from './wire-errors.js';

type Call = [id: number, method: string, args: unknown[]];
type Answer = [id: number, failed: 0 | 1, value: unknown];

/** The names of `Api`'s methods. */
export type MethodOf<Api> = {
  [K in keyof Api]: Api[K] extends (...args: never[]) => unknown ? K : never;
}[keyof Api] &
  string;
export type ArgsOf<Api, M extends MethodOf<Api>> = Api[M] extends (...args: infer A) => unknown ? A : never;
export type ResultOf<Api, M extends MethodOf<Api>> = Api[M] extends (...args: never[]) => infer R ? Awaited<R> : never;

/** Answers the calls that arrive on `endpoint` with `api`'s methods (the actor host's side). */
export function serve<Api extends object>(api: Api, endpoint: Endpoint): void {
  const ok = (id: number, value: unknown) => endpoint.postMessage([id, 0, value] satisfies Answer);
  const failed = (id: number, error: unknown) => endpoint.postMessage([id, 1, toWire(error, true)] satisfies Answer);
  endpoint.onMessage((message) => {
    const [id, method, args] = message as Call;
    let result: unknown;
    try {
      const fn = (api as Record<string, unknown>)[method];
      if (typeof fn !== 'function' || method === 'constructor') throw new TypeError(`No method ${method}`);
      result = fn.apply(api, args);
    } catch (error) {
      return failed(id, error);
    }
    if (result instanceof Promise) {
      result.then(
        (value) => ok(id, value),
        (error) => failed(id, error),
      );
    } else {
      ok(id, result);
    }
  });
}

/** How a client's calls end, given once per kind of call (no closure per call). */
export interface CallPolicy {
  /** Waited beyond the call's timeout for the answer before timedOut. */
  readonly graceMs: number;
  /** The error when no answer came within timeout + grace. */
  timedOut(timeoutMs: number): Error;
  /** Turns an error that crossed into the class callers expect. */
  fromRemote(error: Error, timeoutMs: number): Error;
  /** Runs once when the call settles, however it ends. */
  settled?(): void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  policy: CallPolicy;
  timeoutMs: number;
  expiresAt: number;
  /** The caller's signal (its deadline): when it fires the call rejects with its reason. */
  signal: AbortSignal | undefined;
}

/**
 * The calling side. One interval (only while calls are pending) checks for calls past their time instead of a
 * timer per call; a timed-out call is failed within `sweepMs` of its time.
 */
export class RpcClient<Api> {
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  #sweeper: NodeJS.Timeout | undefined;
  /**
   * The signals this client listens to, one listener each: the calls of a deadline's slice share its signal
   * (deadline-signals.ts), so a call adds no listener, closure or promise of its own; the last one is checked first.
   */
  readonly #watched = new WeakSet<AbortSignal>();
  #lastWatched: AbortSignal | undefined;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly sweepMs = 100,
  ) {
    endpoint.onMessage((message) => this.#answer(message as Answer));
  }

  /**
   * Calls `method` with `args`; the transferables (a stream's port) move to the other side. `signal` (not yet
   * fired): the call rejects with its reason once it fires, while its answer is still awaited for `settled`.
   */
  call<M extends MethodOf<Api>>(
    method: M,
    args: ArgsOf<Api, M>,
    timeoutMs: number,
    policy: CallPolicy,
    transfer?: readonly TransferListItem[],
    signal?: AbortSignal,
  ): Promise<ResultOf<Api, M>> {
    const id = ++this.#nextId;
    if (signal && signal !== this.#lastWatched) this.#watch(signal);
    return new Promise((resolve, reject) => {
      this.#pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        policy,
        timeoutMs,
        expiresAt: Date.now() + timeoutMs + policy.graceMs,
        signal,
      });
      this.endpoint.postMessage([id, method, args] satisfies Call, transfer);
      this.#sweeper ??= setInterval(() => this.#sweep(), this.sweepMs).unref();
    });
  }

  get pending(): number {
    return this.#pending.size;
  }

  /** Fails every pending call (the other side is gone). */
  failAll(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of pending) {
      call.policy.settled?.();
      call.reject(error);
    }
  }

  #watch(signal: AbortSignal): void {
    this.#lastWatched = signal;
    if (this.#watched.has(signal)) return;
    this.#watched.add(signal);
    signal.addEventListener('abort', () => this.#aborted(signal), { once: true });
  }

  /** Rejects the calls waiting on `signal` (settling a promise twice is a no-op: their answers change nothing). */
  #aborted(signal: AbortSignal): void {
    if (this.#lastWatched === signal) this.#lastWatched = undefined;
    const reason = abortReason(signal);
    for (const call of this.#pending.values()) if (call.signal === signal) call.reject(reason);
  }

  #answer([id, failed, value]: Answer): void {
    const call = this.#pending.get(id);
    if (!call) return; // timed out already
    this.#pending.delete(id);
    call.policy.settled?.();
    if (failed) call.reject(call.policy.fromRemote(fromWire(value as WireError), call.timeoutMs));
    else call.resolve(value);
  }

  #sweep(): void {
    if (this.#pending.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
      return;
    }
    const now = Date.now();
    for (const [id, call] of this.#pending) {
      if (call.expiresAt > now) continue;
      this.#pending.delete(id);
      call.policy.settled?.();
      call.reject(call.policy.timedOut(call.timeoutMs));
    }
  }
}
