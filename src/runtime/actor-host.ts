// Thread: actor host
// The worker side of the actor runtime: hosts the session actors of one shard. Each actor has a bounded
// mailbox; idle actors are dropped from memory (their state lives in LMDB) and come back on the next message.
// A message may carry its caller's deadline (its time: deadline-signals.ts): when it passes, the message leaves the
// mailbox unrun, or the running actor sees its AbortSignal fire and must not commit (the caller was told the call
// failed, with the same DeadlineExceededError).
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from '../base/log.js';
import type { Store } from '../store/env.js';
import { deadlineAt } from './deadline-signals.js';
import { HostClosingError } from './errors.js';
import { Mailbox, type MailboxTask } from './mailbox.js';
import type { HostApi, TraceCarrier } from './messages.js';
import { type Context, tracing } from '../telemetry/index.js';
import type { Actor, ActorProtocol, ProtocolShape } from './protocol.js';

/**
 * What a host gives its actor kinds. The runtime knows no face and no cluster: the configuration and the cluster
 * connection the kinds read are added to this interface by src/app/actor-kinds.ts, the one place that knows them all.
 */
export interface HostContext {
  readonly hostIndex: number;
  readonly store: Store;
  readonly log: Logger;
  /** Sends an event to every socket subscribed to `topic` on the main thread. */
  publish(topic: string, event: string, data: unknown): void;
  /** Sends a message to an actor of this host (work of a kind's own, such as an outbox recording a delivery). */
  send?(kind: string, actorId: string, message: unknown): Promise<unknown>;
}

export type { Actor } from './protocol.js';

/** A mailbox task that hands its actor the call's trace context (the actor span's; undefined when untraced). */
type ActorTask<T> = (cancelled?: AbortSignal, trace?: Context) => ReturnType<MailboxTask<T>>;

/** How a host creates the actors of one kind; `name` is its protocol's kind (declared once, in the protocol). */
export interface ActorKind<S extends ProtocolShape = ProtocolShape> {
  readonly name: string;
  /** Awaited by the host before the kind's first actor is made: services that open asynchronously (over NATS). */
  prepare?(host: HostContext): Promise<void>;
  /** Whether the host prepares the kind at its start, before any call: it has work of its own to resume. */
  eager?(host: HostContext): boolean;
  create(actorId: string, host: HostContext): Actor<S>;
}

/** The ActorKind of `protocol`: the name comes from the declaration. */
export function actorKind<S extends ProtocolShape>(
  protocol: ActorProtocol<S>,
  create: (actorId: string, host: HostContext) => Actor<S>,
  prepare?: (host: HostContext) => Promise<void>,
  eager?: (host: HostContext) => boolean,
): ActorKind<S> {
  return { name: protocol.kind, create, ...(prepare ? { prepare } : {}), ...(eager ? { eager } : {}) };
}

/**
 * Services the actors of one kind share on a host (repositories, clients, keys). Some open asynchronously
 * (over NATS in cluster mode), so they are built once per host by `prepare` (the kind's prepare hook, awaited
 * by the host before the kind's first actor) and then read synchronously by `of`, so actors stay plain classes.
 * @example const services = preparedPerHost(async (host) => ({ sessions: await openSessions(host) }));
 */
export function preparedPerHost<T>(build: (host: HostContext) => Promise<T>): {
  prepare(host: HostContext): Promise<void>;
  of(host: HostContext): T;
} {
  const built = new WeakMap<HostContext, T>();
  return {
    async prepare(host) {
      if (!built.has(host)) built.set(host, await build(host));
    },
    of(host) {
      if (!built.has(host)) throw new Error('actor kind used before its services were prepared (ActorKind.prepare)');
      return built.get(host) as T;
    },
  };
}

interface Cell {
  readonly kind: string;
  readonly actor: Actor;
  readonly mailbox: Mailbox;
  lastUsed: number;
}

export class UnknownActorKindError extends Error {
  constructor(kind: string) {
    super(`Unknown actor kind ${kind}`);
    this.name = 'UnknownActorKindError';
  }
}

export interface HostOptions {
  /** Messages one actor may hold, queued or running (ACTOR_MAILBOX_LIMIT). */
  mailboxLimit?: number;
  /** Runs once the mailboxes are drained on close (the worker closes its LMDB environment here). */
  afterClose?: () => Promise<void>;
}

export class ActorHost implements HostApi {
  readonly #kinds: Map<string, ActorKind>;
  readonly #cells = new Map<string, Cell>();
  readonly #sweeper: NodeJS.Timeout;
  /** Kinds whose services are ready, and those being prepared (ActorKind.prepare), by name. */
  readonly #prepared = new Set<string>();
  readonly #preparing = new Map<string, Promise<void>>();
  #closing: Promise<{ drained: boolean }> | undefined;

  constructor(
    kinds: readonly ActorKind[],
    private readonly context: HostContext,
    private readonly idleMs: number,
    private readonly options: HostOptions = {},
  ) {
    this.#kinds = new Map(kinds.map((kind) => [kind.name, kind]));
    this.#sweeper = setInterval(() => this.evictIdle(), Math.max(250, idleMs / 2));
    this.#sweeper.unref();
    for (const kind of kinds)
      if (kind.eager?.(context))
        this.#prepare(kind.name)?.catch((err: unknown) =>
          context.log.warn(
            { err, kind: kind.name },
            'preparing an actor kind at start failed (retried by its first call)',
          ),
        );
  }

  send(kind: string, actorId: string, message: unknown, deadline?: number, trace?: TraceCarrier): Promise<unknown> {
    const preparing = this.#prepare(kind);
    if (preparing) return preparing.then(() => this.#send(kind, actorId, message, deadline, trace));
    return this.#send(kind, actorId, message, deadline, trace);
  }

  /** send once the kind is prepared: not an async function, so the actor's own promise is the answer (one less per call). */
  #send(
    kind: string,
    actorId: string,
    message: unknown,
    deadline: number | undefined,
    trace: TraceCarrier | undefined,
  ): Promise<unknown> {
    let cell: Cell;
    try {
      cell = this.#cell(kind, actorId);
    } catch (error) {
      return Promise.reject(error);
    }
    const task: ActorTask<unknown> = (cancelled, context) => cell.actor.receive(message, cancelled, context);
    return trace && tracing
      ? this.#traced('send', cell, actorId, deadline, trace, task)
      : this.#post(cell, deadline, task);
  }

  async stream(
    kind: string,
    actorId: string,
    message: unknown,
    port: MessagePort,
    deadline?: number,
    trace?: TraceCarrier,
  ): Promise<void> {
    const preparing = this.#prepare(kind);
    if (preparing) await preparing.catch((error: unknown) => (port.close(), Promise.reject(error)));
    const cell = this.#cell(kind, actorId);
    const actor = cell.actor;
    if (!actor.stream) throw new Error(`Actor kind ${kind} does not stream`);
    let started = false;
    const task: ActorTask<void> = (cancelled, context) => {
      started = true;
      return actor.stream!(message, port, cancelled, context);
    };
    const posted =
      trace && tracing
        ? this.#traced('stream', cell, actorId, deadline, trace, task)
        : this.#post(cell, deadline, task);
    return posted.catch((error: unknown) => {
      // Refused or dropped before it ran: nobody else will close the stream's port.
      if (!started) port.close();
      throw error;
    });
  }

  /**
   * Delivers a signal to an actor in memory. An actor that is not in memory is not woken: it holds no
   * generation and no waiting tool call (actors with work in flight are never evicted), so there is nothing
   * for the signal to reach. The answer is then `undefined`, which every caller reads as "not delivered".
   */
  signal(kind: string, actorId: string, message: unknown, trace?: TraceCarrier): Promise<unknown> {
    const cell = this.#cells.get(`${kind}\0${actorId}`);
    const deliver = async () => {
      if (!cell?.actor.signal) {
        this.context.log?.debug({ kind, actorId }, 'signal not delivered: actor not in memory');
        return undefined;
      }
      return cell.actor.signal(message);
    };
    const t = tracing;
    const parent = trace && t?.fromCarrier(trace);
    if (!t || !parent) return deliver();
    // Like a call's span, under the caller's context: the signal's time in the actor, and whether it reached one.
    const span = t.start(
      `actor signal ${kind}`,
      'internal',
      {
        'actor.kind': kind,
        'actor.id': actorId,
        'actor.host': this.context.hostIndex,
        'actor.delivered': cell?.actor.signal !== undefined,
      },
      parent,
    );
    return deliver().then(
      (value) => (span.end(), value),
      (error: unknown) => {
        t.failed(span, error);
        span.end();
        throw error;
      },
    );
  }

  stats() {
    return { actors: this.#cells.size, hostIndex: this.context.hostIndex };
  }

  /** Actors in memory by kind and messages in their mailboxes, for metrics (one pass, once a second). */
  load(): { actors: Record<string, number>; mailboxDepth: number } {
    const actors: Record<string, number> = {};
    let mailboxDepth = 0;
    for (const kind of this.#kinds.keys()) actors[kind] = 0;
    for (const cell of this.#cells.values()) {
      actors[cell.kind]++;
      mailboxDepth += cell.mailbox.pending;
    }
    return { actors, mailboxDepth };
  }

  /** Drops actors that have been idle longer than idleMs. */
  evictIdle(now = Date.now()): number {
    let evicted = 0;
    for (const [key, cell] of this.#cells) {
      if (cell.mailbox.pending > 0 || now - cell.lastUsed < this.idleMs) continue;
      if (cell.actor.isIdle && !cell.actor.isIdle()) continue;
      cell.actor.dispose?.();
      this.#cells.delete(key);
      evicted++;
    }
    return evicted;
  }

  /**
   * Takes no new messages, waits (up to `timeoutMs`) for every mailbox to drain, disposes the actors, then
   * runs afterClose. `drained` is false when work was still running at the timeout.
   */
  close(timeoutMs = 0): Promise<{ drained: boolean }> {
    return (this.#closing ??= (async () => {
      clearInterval(this.#sweeper);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
      const allDrained = Promise.all([...this.#cells.values()].map((cell) => cell.mailbox.drained())).then(() => true);
      const drained = await Promise.race([allDrained, timedOut]);
      clearTimeout(timer);
      for (const cell of this.#cells.values()) cell.actor.dispose?.();
      this.#cells.clear();
      await this.options.afterClose?.();
      return { drained };
    })());
  }

  /**
   * The kind's services, prepared on its first call (a host never used for a kind opens nothing for it); undefined
   * once ready, so later calls reach the mailbox in the same turn, in the order they came. A failed prepare is
   * tried again by the next call.
   */
  #prepare(kindName: string): Promise<void> | undefined {
    if (this.#prepared.has(kindName)) return undefined;
    const kind = this.#kinds.get(kindName);
    if (!kind?.prepare) {
      if (kind) this.#prepared.add(kindName);
      return undefined;
    }
    let preparing = this.#preparing.get(kindName);
    if (!preparing) {
      preparing = kind.prepare(this.context).then(
        () => void this.#prepared.add(kindName),
        (error: unknown) => {
          this.#preparing.delete(kindName);
          throw error;
        },
      );
      this.#preparing.set(kindName, preparing);
    }
    return preparing;
  }

  /**
   * #post inside the actor's span (a child of the caller's, whose context came in the call): it starts when the
   * call arrives and says how long the message waited in the mailbox and how long the actor ran it.
   */
  #traced<T>(
    op: 'send' | 'stream',
    cell: Cell,
    actorId: string,
    deadline: number | undefined,
    carrier: TraceCarrier,
    task: ActorTask<T>,
  ): Promise<T> {
    const t = tracing!;
    const parent = t.fromCarrier(carrier);
    // A carrier that names no valid context (never sent so): the call untraced.
    if (!parent) return this.#post(cell, deadline, task);
    const arrived = performance.now();
    const span = t.start(
      `actor ${op} ${cell.kind}`,
      'internal',
      {
        'actor.kind': cell.kind,
        'actor.id': actorId,
        'actor.host': this.context.hostIndex,
      },
      parent,
    );
    const context = t.contextOf(span, parent);
    let started = 0;
    const ended = () => {
      const now = performance.now();
      span.setAttributes({
        'actor.queued_ms': (started || now) - arrived,
        'actor.running_ms': started ? now - started : 0,
      });
      span.end();
    };
    return this.#post(cell, deadline, (cancelled) => {
      started = performance.now();
      return task(cancelled, context);
    }).then(
      (value) => (ended(), value),
      (error: unknown) => {
        t.failed(span, error);
        ended();
        throw error;
      },
    );
  }

  #post<T>(cell: Cell, deadline: number | undefined, task: ActorTask<T>): Promise<T> {
    // The caller's deadline, made again from its time on the same clock (threads of one process): both sides see it
    // pass together, with the same reason (a DeadlineExceededError).
    return cell.mailbox.post(task, deadline === undefined ? undefined : deadlineAt(deadline));
  }

  #cell(kindName: string, actorId: string): Cell {
    if (this.#closing) throw new HostClosingError();
    const key = `${kindName}\0${actorId}`;
    let cell = this.#cells.get(key);
    if (!cell) {
      const kind = this.#kinds.get(kindName);
      if (!kind) throw new UnknownActorKindError(kindName);
      cell = {
        kind: kindName,
        actor: kind.create(actorId, this.context),
        mailbox: new Mailbox(this.options.mailboxLimit),
        lastUsed: 0,
      };
      this.#cells.set(key, cell);
    }
    cell.lastUsed = Date.now();
    return cell;
  }
}
