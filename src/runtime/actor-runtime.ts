// The main-thread side of the actor runtime: one worker thread per actor host, sessions sharded by id.
// Calls go through comlink; a host that dies fails its in-flight calls and is restarted, and its
// actors resume from LMDB on their next message.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { actorHostRestarts, applyHostReport, forgetHost, type HostReport } from '../metrics/index.js';
import { Comlink, batchingEndpoint, type Remote } from './comlink.js';
import type { ActorEvent, HostApi, HostInit } from './messages.js';
import { shardOf } from './shard.js';

export class HostUnavailableError extends Error {
  constructor(hostIndex: number, reason: string) {
    super(`Actor host ${hostIndex} unavailable: ${reason}`);
    this.name = 'HostUnavailableError';
  }
}

const HOST_ENTRY = new URL('../../workers/actor-host.js', import.meta.url);
const MAX_RESTART_DELAY_MS = 5_000;

class HostHandle {
  #worker?: Worker;
  #api?: Remote<HostApi>;
  /** comlink builds a new proxy (and registers it for finalisation) on every property access: keep them. */
  #remote?: Pick<Remote<HostApi>, 'send' | 'stream' | 'signal' | 'stats'>;
  #pending = new Set<(error: Error) => void>();
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
    this.#remote = { send: api.send, stream: api.stream, signal: api.signal, stats: api.stats };
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

  call<T>(use: (api: Pick<Remote<HostApi>, 'send' | 'stream' | 'signal' | 'stats'>) => Promise<T>, timeoutMs: number): Promise<T> {
    const api = this.#remote;
    if (!api) return Promise.reject(new HostUnavailableError(this.index, 'restarting'));
    return new Promise<T>((resolve, reject) => {
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      const timer = setTimeout(() => {
        this.#pending.delete(fail);
        reject(new HostUnavailableError(this.index, `no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.add(fail);
      use(api).then(
        (value) => {
          clearTimeout(timer);
          this.#pending.delete(fail);
          resolve(value);
        },
        (error) => {
          this.#pending.delete(fail);
          fail(error);
        },
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

  async stop(): Promise<void> {
    this.#stopping = true;
    const worker = this.#worker;
    if (!worker) return;
    this.#api?.[Comlink.releaseProxy]();
    await worker.terminate();
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

export class ActorRuntime {
  readonly #hosts: HostHandle[];
  readonly #listeners = new Set<(event: ActorEvent) => void>();
  readonly #timeoutMs: number;

  constructor(options: ActorRuntimeOptions) {
    this.#timeoutMs = options.callTimeoutMs ?? 15_000;
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

  send<T = unknown>(kind: string, actorId: string, message: unknown, timeoutMs = this.#timeoutMs): Promise<T> {
    const host = this.#hosts[this.hostOf(actorId)];
    return host.call((api) => api.send(kind, actorId, message) as Promise<T>, timeoutMs);
  }

  signal<T = unknown>(kind: string, actorId: string, message: unknown): Promise<T> {
    const host = this.#hosts[this.hostOf(actorId)];
    return host.call((api) => api.signal(kind, actorId, message) as Promise<T>, this.#timeoutMs);
  }

  /** Opens a stream from an actor: it writes frames to the returned port. */
  stream(kind: string, actorId: string, message: unknown, timeoutMs = 24 * 3600_000): ActorStream {
    const channel = new MessageChannel();
    const host = this.#hosts[this.hostOf(actorId)];
    const done = host.call(
      (api) => api.stream(kind, actorId, message, Comlink.transfer(channel.port2, [channel.port2])),
      timeoutMs,
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

  async stop(): Promise<void> {
    await Promise.all(this.#hosts.map((host) => host.stop()));
  }
}
