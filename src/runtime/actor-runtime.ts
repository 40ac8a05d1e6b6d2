// Thread: main
// The single-node ActorRouter: one worker thread per actor host, sessions sharded by id. Calls
// go through a lean typed RPC (rpc.ts) over a batching MessagePort; a host that dies fails its in-flight
// calls and is restarted, and its actors resume from LMDB on their next message.
import { MessageChannel, Worker, type TransferListItem } from 'node:worker_threads';
import type { RuntimeConfig } from './config.js';
import type { Logger } from '../base/log.js';
import { actorHostRestarts } from '../metrics/catalogue.js';
import { applyHostReport, forgetHost, type HostReport } from '../metrics/host-report.js';
import { batchingEndpoint } from './batching-endpoint.js';
import { ActorBusyError, CallCancelledError, HostClosingError, HostUnavailableError } from './errors.js';
import type { ActorEvent, HostApi, HostInit } from './messages.js';
import type { ActorProtocol, ProtocolShape } from './protocol.js';
import { abortReason, deadlineOfCall, timeOf } from './deadline-signals.js';
import { ActorRef, type Actors, type ActorStream, type CallDeadline } from './router.js';
import { RpcClient, serve, type ArgsOf, type CallPolicy, type MethodOf, type ResultOf } from './rpc.js';
import { shardOf } from './shard.js';
import { type Context, tracing } from '../telemetry/index.js';

export { ActorBusyError, DomainError, HostUnavailableError } from './errors.js';
export { ActorRef, type ActorRouter, type Actors, type ActorStream } from './router.js';

const HOST_ENTRY = new URL('../../workers/actor-host.js', import.meta.url);
const MAX_RESTART_DELAY_MS = 5_000;
/**
 * How long after a call's deadline its slot in the host's queue stays counted: the caller is answered at the
 * deadline (its signal's reason), and the host cancels the work at the same deadline (same clock) and answers
 * then; only a host that says nothing at all for this long more frees the slot unanswered. A bound on the queue,
 * not on the caller.
 */
const QUEUE_SLOT_GRACE_MS = 5_000;
/** Beyond the shutdown timeout, how long a closing host may take to say it closed before it is terminated. */
const CLOSE_GRACE_MS = 5_000;

export interface HostClosed {
  host: number;
  /** False when work was still running at the shutdown timeout (it was cut by terminate). */
  drained: boolean;
}

class HostHandle {
  #worker?: Worker;
  #rpc?: RpcClient<HostApi>;
  /** Mailbox calls sent and not yet answered (ACTOR_HOST_QUEUE_LIMIT bounds them). */
  #queued = 0;
  #stopping = false;
  #restartDelay = 50;
  #startedAt = 0;
  restarts = 0;
  /** Direct calls (signal, stats, close): the host answers them at once, so the timeout alone bounds them. */
  readonly #direct: CallPolicy;
  /** Mailbox calls: counted against the queue limit until the host answers (or a grace past their deadline). */
  readonly #mailbox: CallPolicy;

  constructor(
    readonly index: number,
    private readonly config: RuntimeConfig,
    private readonly log: Logger,
    private readonly onEvent: (event: ActorEvent) => void,
    private readonly hostCalls: object | undefined,
  ) {
    const timedOut = (timeoutMs: number) => new HostUnavailableError(this.index, `no answer within ${timeoutMs} ms`);
    const fromRemote = (error: Error, timeoutMs: number) => this.#fromHost(error, timeoutMs);
    this.#direct = { graceMs: 0, timedOut, fromRemote };
    this.#mailbox = { graceMs: QUEUE_SLOT_GRACE_MS, timedOut, fromRemote, settled: () => void this.#queued-- };
    // At 0 from the start: Prometheus's increase() sees no rise in a series that first appears at 1.
    actorHostRestarts.with(String(index));
  }

  start(): void {
    const events = new MessageChannel();
    events.port1.on('message', this.onEvent);
    events.port1.unref();
    const rpc = new MessageChannel();
    const init: HostInit = { hostIndex: this.index, config: this.config, rpcPort: rpc.port2, eventPort: events.port2 };
    const transferList = [rpc.port2, events.port2];
    const metrics = this.config.METRICS_ENABLED ? new MessageChannel() : undefined;
    if (metrics) {
      metrics.port1.on('message', (report: HostReport) => applyHostReport(this.index, report));
      metrics.port1.unref();
      init.metricsPort = metrics.port2;
      transferList.push(metrics.port2);
    }
    // The other way round: the host calls the main thread (rpc.ts), which answers with `hostCalls`' methods.
    const calls = this.hostCalls ? new MessageChannel() : undefined;
    if (calls && this.hostCalls) {
      serve(this.hostCalls, batchingEndpoint(calls.port1));
      calls.port1.unref();
      init.mainPort = calls.port2;
      transferList.push(calls.port2);
    }
    const worker = new Worker(HOST_ENTRY, { workerData: init, transferList });
    this.#worker = worker;
    const client = new RpcClient<HostApi>(batchingEndpoint(rpc.port1));
    // The worker keeps the process alive while it runs; its call port need not.
    rpc.port1.unref();
    this.#rpc = client;
    this.#startedAt = Date.now();
    worker.on('error', (error) => this.log.error({ err: error, host: this.index }, 'actor host failed'));
    worker.on('exit', (code) => {
      rpc.port1.close();
      events.port1.close();
      metrics?.port1.close();
      calls?.port1.close();
      forgetHost(this.index);
      client.failAll(new HostUnavailableError(this.index, `exited with code ${code}`));
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#rpc = undefined;
      if (this.#stopping) return;
      // Back off when a host dies right after starting, so a broken build cannot spin the CPU.
      this.#restartDelay =
        Date.now() - this.#startedAt > 30_000 ? 50 : Math.min(this.#restartDelay * 2, MAX_RESTART_DELAY_MS);
      this.log.error({ host: this.index, code, restartInMs: this.#restartDelay }, 'actor host exited; restarting');
      setTimeout(() => {
        if (this.#stopping) return;
        this.restarts++;
        actorHostRestarts.with(String(this.index)).inc();
        this.start();
      }, this.#restartDelay).unref();
    });
  }

  /** A call the host answers at once (signal, stats). */
  call<M extends MethodOf<HostApi>>(
    method: M,
    args: ArgsOf<HostApi, M>,
    timeoutMs: number,
  ): Promise<ResultOf<HostApi, M>> {
    const rpc = this.#available();
    return rpc instanceof Error ? Promise.reject(rpc) : rpc.call(method, args, timeoutMs, this.#direct);
  }

  /**
   * Mailbox work (send, stream): refused at once when the host's queue is full. Its deadline's time travels in
   * `args` and the host cancels the work there; given the deadline's `signal`, the call rejects with its reason when
   * it fires (rpc.ts), the slot counted until the host answers.
   */
  post<M extends 'send' | 'stream'>(
    method: M,
    args: ArgsOf<HostApi, M>,
    timeoutMs: number,
    transfer?: readonly TransferListItem[],
    signal?: AbortSignal,
  ): Promise<ResultOf<HostApi, M>> {
    const rpc = this.#available();
    if (rpc instanceof Error) return Promise.reject(rpc);
    const limit = this.config.ACTOR_HOST_QUEUE_LIMIT;
    if (this.#queued >= limit)
      return Promise.reject(new ActorBusyError(`Actor host ${this.index} queue full (${limit} calls)`));
    this.#queued++;
    return rpc.call(method, args, timeoutMs, this.#mailbox, transfer, signal);
  }

  #available(): RpcClient<HostApi> | Error {
    if (!this.#rpc) return new HostUnavailableError(this.index, 'restarting');
    if (this.#stopping) return new HostUnavailableError(this.index, 'stopping');
    return this.#rpc;
  }

  /** Kills the worker as a crash would (used by tests and by operators' chaos checks). */
  terminate(): Promise<number> {
    return this.#worker?.terminate() ?? Promise.resolve(0);
  }

  get alive(): boolean {
    return this.#rpc !== undefined;
  }

  /** Lets the host finish its mailboxes (up to `timeoutMs`) and close its LMDB, then ends the thread. */
  async stop(timeoutMs: number): Promise<HostClosed> {
    const worker = this.#worker;
    const rpc = this.#rpc;
    this.#stopping = true;
    if (!worker || !rpc) return { host: this.index, drained: true };
    let drained = false;
    try {
      ({ drained } = await rpc.call('close', [timeoutMs], timeoutMs + CLOSE_GRACE_MS, this.#direct));
    } catch (err) {
      this.log.warn({ err, host: this.index }, 'actor host did not close; terminating it');
    }
    if (!drained) this.log.warn({ host: this.index, inFlight: rpc.pending }, 'actor host stopped with work in flight');
    await worker.terminate();
    return { host: this.index, drained };
  }

  /** Errors arrive from the host by name: back to the classes faces map. */
  /** What a host's refusal means to callers (the codec, wire-errors.ts, already revived the runtime's classes). */
  #fromHost(error: Error, timeoutMs: number): Error {
    if (error instanceof CallCancelledError)
      return new HostUnavailableError(this.index, `no answer within ${timeoutMs} ms`);
    if (error instanceof HostClosingError) return new HostUnavailableError(this.index, 'stopping');
    return error;
  }
}

export interface ActorRuntimeOptions {
  threads: number;
  config: RuntimeConfig;
  log: Logger;
  /** The deadline of a call that comes without one (default 15 s). */
  callTimeoutMs?: number;
  /**
   * What the main thread serves the hosts: an object whose methods a host calls over its call port (rpc.ts), the
   * other way round from the actors' calls. The runtime knows none of them (the composition root fills it in).
   */
  hostCalls?: object;
}

export class ActorRuntime implements Actors {
  readonly #hosts: HostHandle[];
  readonly #listeners = new Set<(event: ActorEvent) => void>();
  readonly #timeoutMs: number;
  readonly #shutdownTimeoutMs: number;
  #stopped: Promise<HostClosed[]> | undefined;

  constructor(options: ActorRuntimeOptions) {
    this.#timeoutMs = options.callTimeoutMs ?? 15_000;
    this.#shutdownTimeoutMs = options.config.SHUTDOWN_TIMEOUT_MS;
    const dispatch = (event: ActorEvent) => {
      for (const listener of this.#listeners) listener(event);
    };
    this.#hosts = Array.from(
      { length: options.threads },
      (_, index) => new HostHandle(index, options.config, options.log, dispatch, options.hostCalls),
    );
  }

  get hostCount(): number {
    return this.#hosts.length;
  }

  /** Starts the hosts and waits until each one answers. */
  async start(): Promise<void> {
    for (const host of this.#hosts) host.start();
    await Promise.all(this.#hosts.map((host) => host.call('stats', [], 30_000)));
  }

  hostOf(actorId: string): number {
    return shardOf(actorId, this.#hosts.length);
  }

  /** The actor `actorId` of the kind `protocol` declares: what it is sent and what it answers are typed. */
  ref<S extends ProtocolShape>(protocol: ActorProtocol<S>, actorId: string, trace?: Context): ActorRef<S> {
    return new ActorRef(this, protocol.kind, actorId, trace);
  }

  /**
   * Sends `message` to the actor's mailbox (untyped: use ref()). Refused at once with ActorBusyError when its
   * mailbox or its host's queue is full. At its deadline (a signal's or ms from now: router.ts, CallDeadline) the
   * call rejects with the deadline's reason, and the host, given the deadline's time, cancels the work then
   * (dropped if queued, not committed if running). A refusal of the actor rejects with its DomainError.
   */
  send(kind: string, actorId: string, message: unknown, deadline?: CallDeadline, trace?: Context): Promise<unknown> {
    const signal = deadlineOfCall(deadline, this.#timeoutMs);
    if (signal.aborted) return Promise.reject(abortReason(signal));
    const host = this.#hosts[this.hostOf(actorId)];
    const carrier = trace && tracing?.carrier(trace);
    const now = Date.now();
    // A signal that is no deadline (a caller's own controller) ends the wait when it fires; the host gets the default.
    const at = timeOf(signal) ?? now + this.#timeoutMs;
    const args: ArgsOf<HostApi, 'send'> = carrier
      ? [kind, actorId, message, at, carrier]
      : [kind, actorId, message, at];
    // The call itself rejects when the signal fires (rpc.ts): no second wait on the signal per call.
    return host.post('send', args, Math.max(0, at - now), undefined, signal);
  }

  /** Reaches an actor outside its mailbox (untyped: use ref()); resolves `undefined` when it is not in memory. */
  signal(kind: string, actorId: string, message: unknown, trace?: Context): Promise<unknown> {
    const host = this.#hosts[this.hostOf(actorId)];
    const carrier = trace && tracing?.carrier(trace);
    return host.call('signal', carrier ? [kind, actorId, message, carrier] : [kind, actorId, message], this.#timeoutMs);
  }

  /** Opens a stream from an actor: it writes frames to the returned channel (a MessagePort whose other end it holds). */
  stream(kind: string, actorId: string, message: unknown, timeoutMs = 24 * 3600_000, trace?: Context): ActorStream {
    const { port1, port2 } = new MessageChannel();
    const host = this.#hosts[this.hostOf(actorId)];
    const carrier = trace && tracing?.carrier(trace);
    const deadline = Date.now() + timeoutMs;
    const args: ArgsOf<HostApi, 'stream'> = carrier
      ? [kind, actorId, message, port2, deadline, carrier]
      : [kind, actorId, message, port2, deadline];
    const done = host.post('stream', args, timeoutMs, [port2]);
    return { channel: port1, done };
  }

  /** Receives every event that actors publish. */
  onEvent(listener: (event: ActorEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async stats() {
    return Promise.all(this.#hosts.map((host) => host.call('stats', [], this.#timeoutMs)));
  }

  restartCount(index: number): number {
    return this.#hosts[index].restarts;
  }

  isHostAlive(index: number): boolean {
    return this.#hosts[index].alive;
  }

  /** Kills host `index` the way a crash would; the runtime restarts it. */
  terminateHost(index: number): Promise<number> {
    return this.#hosts[index].terminate();
  }

  /**
   * Graceful stop: each host takes no new calls, finishes what its mailboxes hold (their answers reach the
   * callers), closes its LMDB environment, and only then is its thread terminated. Work still running after
   * `timeoutMs` (SHUTDOWN_TIMEOUT_MS) is cut. Idempotent.
   */
  stop(timeoutMs = this.#shutdownTimeoutMs): Promise<HostClosed[]> {
    return (this.#stopped ??= Promise.all(this.#hosts.map((host) => host.stop(timeoutMs))));
  }
}
