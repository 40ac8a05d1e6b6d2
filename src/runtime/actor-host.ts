// The worker side of the actor runtime: hosts the session actors of one shard. Each actor has a mailbox;
// idle actors are dropped from memory (their state lives in LMDB) and come back on the next message.
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/env.js';
import { Mailbox } from './mailbox.js';
import type { HostApi } from './messages.js';

export interface HostContext {
  readonly hostIndex: number;
  readonly config: Config;
  readonly store: Store;
  readonly log: Logger;
  /** Sends an event to every socket subscribed to `topic` on the main thread. */
  publish(topic: string, event: string, data: unknown): void;
}

export interface Actor {
  /** Handles one message; runs in the actor's mailbox, so never concurrently with another. */
  receive(message: unknown): Promise<unknown>;
  /** Handles one message whose answer is a stream of frames written to `port`; runs in the mailbox. */
  stream?(message: unknown, port: MessagePort): Promise<void>;
  /** Handles a signal outside the mailbox (e.g. abort while a stream is running). */
  signal?(message: unknown): unknown;
  /** False while the actor holds work that must not be dropped. */
  isIdle?(): boolean;
  dispose?(): void;
}

export interface ActorKind {
  readonly name: string;
  create(actorId: string, host: HostContext): Actor;
}

/**
 * Services the actors of one kind share on a host (databases, clients, keys), built on first use.
 * @example const servicesOf = perHost((host) => ({ sessions: host.store.db('ussd-sessions') }));
 */
export function perHost<T>(build: (host: HostContext) => T): (host: HostContext) => T {
  const built = new WeakMap<HostContext, T>();
  return (host) => {
    let services = built.get(host);
    if (services === undefined) {
      services = build(host);
      built.set(host, services);
    }
    return services;
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

export class ActorHost implements HostApi {
  readonly #kinds: Map<string, ActorKind>;
  readonly #cells = new Map<string, Cell>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(
    kinds: readonly ActorKind[],
    private readonly context: HostContext,
    private readonly idleMs: number,
  ) {
    this.#kinds = new Map(kinds.map((kind) => [kind.name, kind]));
    this.#sweeper = setInterval(() => this.evictIdle(), Math.max(250, idleMs / 2));
    this.#sweeper.unref();
  }

  async send(kind: string, actorId: string, message: unknown): Promise<unknown> {
    const cell = this.#cell(kind, actorId);
    return cell.mailbox.post(() => cell.actor.receive(message));
  }

  async stream(kind: string, actorId: string, message: unknown, port: MessagePort): Promise<void> {
    const cell = this.#cell(kind, actorId);
    const actor = cell.actor;
    if (!actor.stream) throw new Error(`Actor kind ${kind} does not stream`);
    return cell.mailbox.post(() => actor.stream!(message, port));
  }

  async signal(kind: string, actorId: string, message: unknown): Promise<unknown> {
    const cell = this.#cells.get(`${kind}\0${actorId}`);
    return cell?.actor.signal?.(message);
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

  close(): void {
    clearInterval(this.#sweeper);
  }

  #cell(kindName: string, actorId: string): Cell {
    const key = `${kindName}\0${actorId}`;
    let cell = this.#cells.get(key);
    if (!cell) {
      const kind = this.#kinds.get(kindName);
      if (!kind) throw new UnknownActorKindError(kindName);
      cell = { kind: kindName, actor: kind.create(actorId, this.context), mailbox: new Mailbox(), lastUsed: 0 };
      this.#cells.set(key, cell);
    }
    cell.lastUsed = Date.now();
    return cell;
  }
}
