// The main-thread side of the actor runtime: one worker thread per actor host, sessions sharded by id.
// Calls go through comlink; a host that dies fails its in-flight calls and is restarted, and its
// actors resume from LMDB on their next message.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { actorHostRestarts } from '../metrics/catalogue.js';
import { applyHostReport, forgetHost, type HostReport } from '../metrics/host-report.js';
import { Comlink, batchingEndpoint, type Remote } from './comlink.js';
import { ActorBusyError, HostUnavailableError } from './errors.js';
import type { ActorEvent, HostApi, HostInit } from './messages.js';
import type { ActorProtocol, ProtocolShape, ReplyOf, TypedMessage } from './protocol.js';
import { shardOf } from './shard.js';

export { ActorBusyError, DomainError, HostUnavailableError } from './errors.js';

const HOST_ENTRY = new URL('../../workers/actor-host.js', import.meta.url);
const MAX_RESTART_DELAY_MS = 5_000;
/**
 * How long after a call's deadline the main thread still waits for the host's own answer. The host cancels
 * mailbox work at the deadline itself (same clock), so the caller hears "cancelled" or, when the actor had
 * already committed, its real answer; never a failure for work that then commits. Only a host that says
 * nothing at all for this long is given up on.
 */
const DEADLINE_GRACE_MS = 5_000;

type HostRemote = Pick<Remote<HostApi>, 'send' | 'stream' | 'signal' | 'stats' | 'close'>;

export interface HostClosed {
  host: number;
  /** False when work was still running at the shutdown timeout (it was cut by terminate). */
  drained: boolean;
}

class HostHandle {
  #worker?: Worker;
  #api?: Remote<HostApi>;
  /** comlink builds a new proxy (and registers it for finalisation) on every property access: keep them. */
  #remote?: HostRemote;
  #pending = new Set<(error: Error) => void>();
  /** Mailbox calls sent and not yet answered (ACTOR_HOST_QUEUE_LIMIT bounds them). */
  #queued = 0;
  #stopping = false;
  #restartDelay = 50;
  #startedAt = 0;
  restarts = 0;

  constructor(
    readonly index: number,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly onEvent: (event: ActorEvent) => void,
  ) {}

  start(): void {
    const events = new MessageChannel();
    events.port1.on('message', this.onEvent);
    events.port1.unref();
    const init: HostInit = { hostIndex: this.index, config: this.config, eventPort: events.port2 };
    const transferList = [events.port2];
    const metrics = this.config.METRICS_ENABLED ? new MessageChannel() : undefined;
    if (metrics) {
      metrics.port1.on('message', (report: HostReport) => applyHostReport(this.index, report));
      metrics.port1.unref();
      init.metricsPort = metrics.port2;
      transferList.push(metrics.port2);
    }
    const worker = new Worker(HOST_ENTRY, { workerData: init, transferList });
    this.#worker = worker;
    const api = Comlink.wrap<HostApi>(batchingEndpoint(worker));
    this.#api = api;
    this.#remote = { send: api.send, stream: api.stream, signal: api.signal, stats: api.stats, close: api.close };
    this.#startedAt = Date.now();
    worker.on('error', (error) => this.log.error({ err: error, host: this.index }, 'actor host failed'));
    worker.on('exit', (code) => {
      events.port1.close();
      metrics?.port1.close();
      forgetHost(this.index);
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#api = undefined;
      this.#remote = undefined;
      this.#failPending(new HostUnavailableError(this.index, `exited with code ${code}`));
      if (this.#stopping) return;
      // Back off when a host dies right after starting, so a broken build cannot spin the CPU.
      this.#restartDelay = Date.now() - this.#startedAt > 30_000 ? 50 : Math.min(this.#restartDelay * 2, MAX_RESTART_DELAY_MS);
      this.log.error({ host: this.index, code, restartInMs: this.#restartDelay }, 'actor host exited; restarting');
      setTimeout(() => {
        if (this.#stopping) return;
        this.restarts++;
        actorHostRestarts.with(String(this.index)).inc();
        this.start();
      }, this.#restartDelay).unref();
    });
  }

  /**
   * One call to the host. `queued` calls (mailbox work) count against the host's queue limit, refused at once
   * when it is full, and carry their deadline to the host, which cancels them there.
   */
  call<T>(use: (api: HostRemote, deadline: number) => Promise<T>, timeoutMs: number, queued = false): Promise<T> {
    const api = this.#remote;
    if (!api) return Promise.reject(new HostUnavailableError(this.index, 'restarting'));
    if (this.#stopping) return Promise.reject(new HostUnavailableError(this.index, 'stopping'));
    const limit = this.config.ACTOR_HOST_QUEUE_LIMIT;
    if (queued && this.#queued >= limit) return Promise.reject(new ActorBusyError(`Actor host ${this.index} queue full (${limit} calls)`));
    if (queued) this.#queued++;
    return new Promise<T>((resolve, reject) => {
      /** True the first time only: a call settles once (answer, timeout or host exit). */
      const done = () => {
        if (!this.#pending.delete(fail)) return false;
        clearTimeout(timer);
        if (queued) this.#queued--;
        return true;
      };
      const fail = (error: Error) => done() && reject(error);
      const timer = setTimeout(
        () => fail(new HostUnavailableError(this.index, `no answer within ${timeoutMs} ms`)),
        timeoutMs + (queued ? DEADLINE_GRACE_MS : 0),
      );
      this.#pending.add(fail);
      use(api, Date.now() + timeoutMs).then(
        (value) => done() && resolve(value),
        (error: unknown) => fail(this.#fromHost(error, timeoutMs)),
      );
    });
  }

  /** Kills the worker as a crash would (used by tests and by operators' chaos checks). */
  terminate(): Promise<number> {
    return this.#worker?.terminate() ?? Promise.resolve(0);
  }

  get alive(): boolean {
    return this.#api !== undefined;
  }

  /** Lets the host finish its mailboxes (up to `timeoutMs`) and close its LMDB, then ends the thread. */
  async stop(timeoutMs: number): Promise<HostClosed> {
    this.#stopping = true;
    const worker = this.#worker;
    const api = this.#remote;
    if (!worker || !api) return { host: this.index, drained: true };
    let drained = false;
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => (timer = setTimeout(reject, timeoutMs + DEADLINE_GRACE_MS, new Error('no answer to close'))));
    try {
      ({ drained } = await Promise.race([api.close(timeoutMs), silent]));
    } catch (err) {
      this.log.warn({ err, host: this.index }, 'actor host did not close; terminating it');
    } finally {
      clearTimeout(timer);
    }
    if (!drained) this.log.warn({ host: this.index, inFlight: this.#pending.size }, 'actor host stopped with work in flight');
    this.#api?.[Comlink.releaseProxy]();
    await worker.terminate();
    return { host: this.index, drained };
  }

  /** Errors arrive from the host as plain { name, message }: back to the classes faces map. */
  #fromHost(error: unknown, timeoutMs: number): Error {
    if (!(error instanceof Error)) return new Error(String(error));
    switch (error.name) {
      case 'ActorBusyError':
        return new ActorBusyError(error.message);
      case 'CallCancelledError':
        return new HostUnavailableError(this.index, `no answer within ${timeoutMs} ms`);
      case 'HostClosingError':
        return new HostUnavailableError(this.index, 'stopping');
      default:
        return error;
    }
  }

  #failPending(error: Error): void {
    for (const fail of this.#pending) fail(error);
    this.#pending.clear();
  }
}

export interface ActorRuntimeOptions {
  threads: number;
  config: Config;
  log: Logger;
  /** An actor that does not answer within this time fails the call (default 15 s). */
  callTimeoutMs?: number;
}

export interface ActorStream {
  /** Frames the actor writes; closed by the actor when the stream ends. */
  readonly port: MessagePort;
  /** Settles when the actor's stream handler returns. */
  readonly done: Promise<void>;
}

/** One actor, typed by its kind's protocol: the reply type follows from the message's `type`. */
export class ActorRef<S extends ProtocolShape> {
  constructor(
    private readonly runtime: ActorRuntime,
    readonly kind: string,
    readonly id: string,
  ) {}

  // The casts below are the thread boundary: the actor of this kind implements Actor<S> (the same declaration).
  send<M extends TypedMessage<S['calls']>>(message: M, timeoutMs?: number): Promise<ReplyOf<S['calls'], M>> {
    return this.runtime.send(this.kind, this.id, message, timeoutMs) as Promise<ReplyOf<S['calls'], M>>;
  }

  /** `undefined`: the actor is not in memory, so the signal was not delivered. */
  signal<M extends TypedMessage<S['signals']>>(message: M): Promise<ReplyOf<S['signals'], M> | undefined> {
    return this.runtime.signal(this.kind, this.id, message) as Promise<ReplyOf<S['signals'], M> | undefined>;
  }

  stream(message: S['stream'], timeoutMs?: number): ActorStream {
    return this.runtime.stream(this.kind, this.id, message, timeoutMs);
  }
}

export class ActorRuntime {
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
      (_, index) => new HostHandle(index, options.config, options.log, dispatch),
    );
  }

  get hostCount(): number {
    return this.#hosts.length;
  }

  /** Starts the hosts and waits until each one answers. */
  async start(): Promise<void> {
    for (const host of this.#hosts) host.start();
    await Promise.all(this.#hosts.map((host) => host.call((api) => api.stats(), 30_000)));
  }

  hostOf(actorId: string): number {
    return shardOf(actorId, this.#hosts.length);
  }

  /** The actor `actorId` of the kind `protocol` declares: what it is sent and what it answers are typed. */
  ref<S extends ProtocolShape>(protocol: ActorProtocol<S>, actorId: string): ActorRef<S> {
    return new ActorRef(this, protocol.kind, actorId);
  }

  /**
   * Sends `message` to the actor's mailbox (untyped: use ref()). Refused at once with ActorBusyError when its
   * mailbox or its host's queue is full; after `timeoutMs` the work is cancelled (dropped if queued, not
   * committed if running). A refusal of the actor rejects with its DomainError.
   */
  send(kind: string, actorId: string, message: unknown, timeoutMs = this.#timeoutMs): Promise<unknown> {
    const host = this.#hosts[this.hostOf(actorId)];
    return host.call((api, deadline) => api.send(kind, actorId, message, deadline), timeoutMs, true);
  }

  /** Reaches an actor outside its mailbox (untyped: use ref()); resolves `undefined` when it is not in memory. */
  signal(kind: string, actorId: string, message: unknown): Promise<unknown> {
    const host = this.#hosts[this.hostOf(actorId)];
    return host.call((api) => api.signal(kind, actorId, message), this.#timeoutMs);
  }

  /** Opens a stream from an actor: it writes frames to the returned port. */
  stream(kind: string, actorId: string, message: unknown, timeoutMs = 24 * 3600_000): ActorStream {
    const channel = new MessageChannel();
    const host = this.#hosts[this.hostOf(actorId)];
    const done = host.call(
      (api, deadline) => api.stream(kind, actorId, message, Comlink.transfer(channel.port2, [channel.port2]), deadline),
      timeoutMs,
      true,
    );
    return { port: channel.port1, done };
  }

  /** Receives every event that actors publish. */
  onEvent(listener: (event: ActorEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async stats() {
    return Promise.all(this.#hosts.map((host) => host.call((api) => api.stats(), this.#timeoutMs)));
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
