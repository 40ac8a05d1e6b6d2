// Main thread: the cluster's ActorRouter. An actor id maps to a partition; the node holding that partition's lease
// runs the actor. A call for a partition this node holds goes straight to the local runtime (no NATS hop); any other
// goes over NATS request/reply to `<prefix>.actor.<partition>`, which the owner subscribes to while it holds the
// lease (subscribed on acquire, unsubscribed on release or when its own lease lapses).
//
// Errors cross as { name, message, code, details } and come back as the runtime's classes (faces map them with
// instanceof): a DomainError keeps its code and details, ActorBusyError stays ActorBusyError, a timeout is the
// HostUnavailableError a local timeout gives. No responder (the owner died, or the partition is moving) waits for
// the lease table to name another owner and tries again (a new owner may still be subscribing: retried every
// 25 ms), within failoverWaitMs and the call's deadline; then it fails with HostUnavailableError.
//
// Messages and replies travel as JSON: actor protocols are plain data (they already cross threads).
import { NoRespondersError, RequestError, type Msg, type Subscription } from '@nats-io/transport-node';
import { ActorBusyError, CallCancelledError, DomainError, HostUnavailableError } from '../runtime/errors.js';
import type { ActorRouter, ActorStream } from '../runtime/router.js';
import type { ClusterConnection } from './connection.js';
import { partitionOf, type PartitionLeases } from './partition-leases.js';

export interface NatsActorRouterOptions {
  connection: ClusterConnection;
  leases: PartitionLeases;
  /** This node's runtime: runs the actors of the partitions this node holds. */
  local: ActorRouter;
  /** Default deadline of a send and of a signal, as the local runtime's (default 15 s). */
  callTimeoutMs?: number;
  /** How long a caller waits, after a no-responder, for the lease table to name a reachable owner (default 10 s). */
  failoverWaitMs?: number;
}

type Op = 'send' | 'signal';

interface ActorRequest {
  op: Op;
  kind: string;
  actorId: string;
  message: unknown;
  timeoutMs: number;
}

interface WireError {
  name: string;
  message: string;
  code?: string;
  details?: Record<string, unknown>;
}

type ActorReply = { value?: unknown } | { error: WireError };

/** Beyond the call's own deadline, how long a caller waits for the owner to report that deadline's error. */
const REPLY_GRACE_MS = 1_000;
/** A new owner subscribes a few ms after the table names it: a no-responder right then is retried this often. */
const RESUBSCRIBE_POLL_MS = 25;
/** Answered by a node that received a request for a partition it is giving back: the caller retries. */
const MOVED = 'PartitionMovedError';

export class NatsActorRouter implements ActorRouter {
  readonly #connection: ClusterConnection;
  readonly #leases: PartitionLeases;
  readonly #local: ActorRouter;
  readonly #timeoutMs: number;
  readonly #failoverWaitMs: number;
  readonly #subscriptions = new Map<number, Subscription>();
  readonly #onChange = (owned: ReadonlySet<number>) => this.#serve(owned);
  /** Checks of the calls waiting for a remote owner, run on every change of the lease table. */
  readonly #waiting = new Set<() => void>();
  readonly #onTable = () => {
    for (const check of this.#waiting) check();
  };

  constructor(options: NatsActorRouterOptions) {
    this.#connection = options.connection;
    this.#leases = options.leases;
    this.#local = options.local;
    this.#timeoutMs = options.callTimeoutMs ?? 15_000;
    this.#failoverWaitMs = options.failoverWaitMs ?? 10_000;
    this.#leases.on('change', this.#onChange);
    this.#leases.on('table', this.#onTable);
    this.#serve(this.#leases.owned);
  }

  /** The subject owners answer on for `partition`. */
  subjectOf(partition: number): string {
    return `${this.#connection.prefix}.actor.${partition}`;
  }

  send(kind: string, actorId: string, message: unknown, timeoutMs = this.#timeoutMs): Promise<unknown> {
    return this.#route({ op: 'send', kind, actorId, message, timeoutMs });
  }

  signal(kind: string, actorId: string, message: unknown): Promise<unknown> {
    return this.#route({ op: 'signal', kind, actorId, message, timeoutMs: this.#timeoutMs });
  }

  /** Streams run only where the actor lives: a stream for a partition another node holds is refused. */
  stream(kind: string, actorId: string, message: unknown, timeoutMs?: number): ActorStream {
    const partition = this.#partitionOf(actorId);
    if (this.#leases.owns(partition)) return this.#local.stream(kind, actorId, message, timeoutMs);
    throw unavailable(`partition ${partition} is held by another node and streams are not routed across nodes yet`);
  }

  /** Stops answering for any partition (the leases themselves are the caller's to leave). */
  close(): void {
    this.#leases.off('change', this.#onChange);
    this.#leases.off('table', this.#onTable);
    this.#serve(new Set());
  }

  #partitionOf(actorId: string): number {
    return partitionOf(actorId, this.#leases.partitions);
  }

  async #route(request: ActorRequest): Promise<unknown> {
    const partition = this.#partitionOf(request.actorId);
    const deadline = Date.now() + request.timeoutMs;
    let failoverUntil: number | undefined;
    for (;;) {
      if (this.#leases.owns(partition)) return this.#runLocally(request, Math.max(1, deadline - Date.now()));
      const tried = this.#leases.ownerOf(partition);
      try {
        return await this.#request(partition, { ...request, timeoutMs: Math.max(1, deadline - Date.now()) }, tried);
      } catch (error) {
        if (!(error instanceof NotServedError)) throw error;
        let moved: boolean;
        if (failoverUntil === undefined) {
          // First miss: wait for the table to name another owner (a dead owner's lease lapses, a survivor claims).
          failoverUntil = Math.min(deadline, Date.now() + this.#failoverWaitMs);
          moved = await this.#ownerOtherThan(partition, error.formerOwner ?? tried, failoverUntil);
        } else {
          // The named owner is not subscribed yet (it subscribes once its claim is acknowledged): try again shortly.
          await delay(RESUBSCRIBE_POLL_MS);
          moved = Date.now() < failoverUntil && (await this.#ownerOtherThan(partition, undefined, failoverUntil));
        }
        if (!moved) throw unavailable(`no node answers for partition ${partition} (${error.message})`);
      }
    }
  }

  #runLocally(request: ActorRequest, timeoutMs: number): Promise<unknown> {
    return request.op === 'send'
      ? this.#local.send(request.kind, request.actorId, request.message, timeoutMs)
      : this.#local.signal(request.kind, request.actorId, request.message);
  }

  /**
   * One request to the partition's owner. An owner that stops answering without going away (paused, cut off) keeps
   * its subscription until NATS notices, so the wait also ends when the lease table names another owner (it took
   * over once that owner's lease lapsed): the call is then tried there. Should the silent owner resume, it serves
   * nothing with a lapsed lease (PartitionLeases.owns), and a write from its older state is refused by revision.
   */
  async #request(partition: number, request: ActorRequest, tried: string | undefined): Promise<unknown> {
    const subject = this.subjectOf(partition);
    let reply: Msg;
    const pending = this.#connection.nc.request(subject, JSON.stringify(request), { timeout: request.timeoutMs + REPLY_GRACE_MS });
    let check = () => {};
    const taken = new Promise<never>((_, reject) => {
      // With no live owner known when sent, nothing says whom to stop waiting for: the deadline bounds the wait.
      if (tried !== undefined) check = () => this.#movedFrom(partition, tried) && reject(new NotServedError(`partition ${partition}'s owner ${tried} stopped answering`, tried));
    });
    this.#waiting.add(check);
    try {
      reply = await Promise.race([pending, taken]);
    } catch (error) {
      pending.catch(() => undefined); // abandoned when the owner changed
      if (error instanceof NotServedError) throw error;
      if (isNoResponders(error)) throw new NotServedError(`no responder on ${subject}`);
      if (error instanceof Error && error.name === 'TimeoutError') {
        throw unavailable(`partition ${partition}'s owner gave no answer within ${request.timeoutMs} ms`);
      }
      throw unavailable(`request on ${subject} failed: ${(error as Error).message}`);
    } finally {
      this.#waiting.delete(check);
    }
    const answer = reply.json<ActorReply>();
    if ('error' in answer) {
      if (answer.error.name === MOVED) throw new NotServedError(answer.error.message, answer.error.details?.node as string);
      throw fromWire(answer.error);
    }
    return answer.value;
  }

  /** This node holds `partition` now, or the table names a live owner other than `tried`. */
  #movedFrom(partition: number, tried: string | undefined): boolean {
    return this.#leases.owns(partition) || (this.#leases.ownerOf(partition) ?? tried) !== tried;
  }

  /** Resolves true once this node holds `partition` or the table names a live owner other than `tried`. */
  #ownerOtherThan(partition: number, tried: string | undefined, until: number): Promise<boolean> {
    const moved = () => this.#movedFrom(partition, tried);
    if (moved()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (result: boolean) => {
        clearTimeout(timer);
        this.#leases.off('table', check);
        resolve(result);
      };
      const check = () => moved() && done(true);
      const timer = setTimeout(() => done(false), Math.max(0, until - Date.now()));
      this.#leases.on('table', check);
    });
  }

  /**
   * Subscribes to the subjects of the partitions this node holds now, unsubscribes from the others. (The
   * unsubscription reaches the other NATS servers a moment later: a request routed here in that moment is dropped
   * and waits out its deadline. Lingering to answer "moved" instead would race the new owner's answers.)
   */
  #serve(owned: ReadonlySet<number>): void {
    for (const [partition, subscription] of this.#subscriptions) {
      if (owned.has(partition)) continue;
      subscription.unsubscribe();
      this.#subscriptions.delete(partition);
    }
    if (this.#connection.nc.isClosed()) return;
    for (const partition of owned) {
      if (this.#subscriptions.has(partition)) continue;
      const subscription = this.#connection.nc.subscribe(this.subjectOf(partition), {
        callback: (error, msg) => {
          if (!error) void this.#answer(partition, msg);
        },
      });
      this.#subscriptions.set(partition, subscription);
    }
  }

  async #answer(partition: number, msg: Msg): Promise<void> {
    let reply: ActorReply;
    if (!this.#leases.owns(partition)) {
      // Between the release decision and the unsubscription a request can still arrive: send the caller on.
      reply = { error: { name: MOVED, message: `partition ${partition} moved`, details: { node: this.#leases.nodeId } } };
    } else {
      try {
        const request = msg.json<ActorRequest>();
        reply = { value: await this.#runLocally(request, request.timeoutMs) };
      } catch (error) {
        reply = { error: toWire(error) };
      }
    }
    msg.respond(JSON.stringify(reply));
  }

}

/** No node answered for the partition (its owner died or it is moving); the caller may try again. */
class NotServedError extends Error {
  constructor(
    message: string,
    /** The node that said it no longer holds the partition (none: nobody answered). */
    readonly formerOwner?: string,
  ) {
    super(message);
  }
}

function isNoResponders(error: unknown): boolean {
  return error instanceof NoRespondersError || (error instanceof RequestError && error.isNoResponders());
}

/** The router's own unavailability, as the runtime says it, so faces answer it like a host that cannot take a call. */
function unavailable(reason: string): HostUnavailableError {
  const error = new HostUnavailableError(-1, reason);
  error.message = `Actor unavailable: ${reason}`;
  return error;
}

function toWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  if (error instanceof DomainError) return { name: error.name, message: error.message, code: error.code, details: error.details };
  return { name: error.name, message: error.message };
}

/** Back to the classes the local runtime throws, keeping the remote message. */
function fromWire(wire: WireError): Error {
  let error: Error;
  switch (wire.name) {
    case 'DomainError':
      return new DomainError(wire.code ?? 'unknown', wire.message, wire.details);
    case 'ActorBusyError':
      return new ActorBusyError(wire.message);
    case 'HostUnavailableError':
      error = new HostUnavailableError(-1, '');
      break;
    case 'CallCancelledError':
      error = new CallCancelledError();
      break;
    default:
      error = new Error();
      error.name = wire.name;
  }
  error.message = wire.message;
  return error;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
