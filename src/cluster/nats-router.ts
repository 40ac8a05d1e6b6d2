// Thread: main
// The cluster's ActorRouter. An actor id maps to a partition; the node holding that partition's lease
// runs the actor. A call for a partition this node holds goes straight to the local runtime (no hop); a call (send,
// signal, a stream's opening) for another node's goes over the owner's node link (node-link/: a TCP connection,
// advertised in the lease table) when it has one, and otherwise, or when the link cannot be reached, over NATS
// request/reply to `<prefix>.actor.<partition>`, which the owner subscribes to while it holds the lease (subscribed
// on acquire, unsubscribed on release or when its own lease lapses). Both ways end in answer(), so an owner treats
// them alike.
//
// Errors cross as { name, message, code, details } and come back as the runtime's classes (faces map them with
// instanceof): a DomainError keeps its code and details, ActorBusyError stays ActorBusyError. A call has one
// deadline (runtime/deadline-signals.ts): its time travels to the owner, which runs the call under it, and the
// caller stops waiting when it passes, with its DeadlineExceededError, wherever the call was. The router owns the
// failover budget: no responder (the owner died, the partition is moving, or its new owner is still subscribing)
// waits for the lease table to name another owner or for a backoff (25 ms doubling to 500 ms), whichever comes
// first, and tries again, within failoverWaitMs and what is left of the deadline; then it fails with
// HostUnavailableError. A call in flight on a node whose lease lapses fails then with HostUnavailableError (not
// retried: it may have been committed).
//
// A stream for another node's partition is opened the same way (op 'stream', carrying the caller's inbox) and then
// travels on its own pair of NATS subjects (remote-stream.ts); the failover of its opening is that of a send. (Over
// the link, the opening can reach the owner before the caller's inbox subscription has crossed the NATS routes;
// the owner's first frame comes after the actor's own NATS round trips (its session read, the charge), and a
// frame lost anyway fails the stream by its sequence number instead of leaving a hole.)
//
// Messages and replies travel as JSON: actor protocols are plain data (they already cross threads).
import type { Msg, Subscription } from '@nats-io/transport-node';
import { isNoResponders } from './no-responders.js';
import { deadlineIn, deadlineOfCall, timeLeft, timeOf, untilAborted } from '../runtime/deadline-signals.js';
import { DeadlineExceededError } from '../runtime/errors.js';
import type { ActorRouter, ActorStream, CallDeadline } from '../runtime/router.js';
import type { ClusterConnection } from './connection.js';
import { partitionOf, type PartitionLeases } from './partition-leases.js';
import {
  DEFAULT_STREAM_LIVENESS,
  openRemoteStream,
  relayToCaller,
  type StreamLiveness,
  type StreamOpen,
} from './remote-stream.js';
import { fromWire, toWire, type WireError } from '../runtime/wire-errors.js';
import { asUnavailable, remainingOf } from './request-time.js';
import { unavailable } from './unavailable.js';
import { routedCall } from '../metrics/catalogue.js';
import { LinkNotDeliveredError, type NodeLinks } from './node-link/peers.js';
import { carrierOf, inServeSpan, natsHeadersOf, tracedHop, type Hop, type Took } from './route-tracing.js';
import type { MsgHdrs } from '@nats-io/transport-node';
import type { Context } from '../telemetry/index.js';

export interface NatsActorRouterOptions {
  connection: ClusterConnection;
  leases: PartitionLeases;
  /** This node's runtime: runs the actors of the partitions this node holds. */
  local: ActorRouter;
  /** Default deadline of a send and of a signal, as the local runtime's (default 15 s). */
  callTimeoutMs?: number;
  /** How long a caller waits, after a no-responder, for the lease table to name a reachable owner (default 10 s). */
  failoverWaitMs?: number;
  /** How a cross-node stream notices a dead or hung other side (default: ping every 1 s, silent 3 s). */
  streamLiveness?: StreamLiveness;
  /** The control message that stops a stream, posted to the actor when a remote caller left early. */
  streamCancel?: unknown;
  /**
   * Connections to the other nodes' links (node-link/): every call to a node that advertises a link (a stream's
   * opening too) goes there instead of through NATS request/reply. Absent: every call goes through NATS.
   */
  links?: NodeLinks;
}

type Op = 'send' | 'signal' | 'stream';

export interface ActorRequest {
  op: Op;
  kind: string;
  actorId: string;
  message: unknown;
  /** The call's deadline from now (a stream: how long its opening may take). */
  timeoutMs: number;
  /**
   * The same deadline on the caller's clock (ms since the epoch). A request that reaches the owner late (held by
   * the caller's NATS client through a partition and sent on reconnect) must not run after its caller gave up:
   * an old USSD step applied then would move its session back.
   */
  deadlineAt?: number;
  /** A stream: where to relay it, and the stream's own deadline (the local runtime's default when absent). */
  stream?: StreamOpen & { timeoutMs?: number };
  /** Tracing, over the node link: the caller's context (over NATS it travels in the message's headers). */
  trace?: string;
}

export type ActorReply = { value?: unknown } | { error: WireError };

/**
 * The NATS request and the link call wait this much past the deadline, so the deadline's own signal ends the wait
 * first (with its reason) and the request only frees its inbox.
 */
const REQUEST_BACKSTOP_MS = 100;
/** A new owner subscribes a few ms after the table names it: a no-responder is first retried this soon... */
const RESUBSCRIBE_POLL_MS = 25;
/** ...then less and less often (a dead owner's partitions wait for its lease to lapse: seconds). */
const MAX_RETRY_BACKOFF_MS = 500;
/** The queue group of the partitions' subjects: NATS gives each request to one subscriber. */
const OWNERS_QUEUE = 'owners';

/** Answered by a node that received a request for a partition it is giving back: the caller retries. */
const MOVED = 'PartitionMovedError';

export class NatsActorRouter implements ActorRouter {
  readonly #connection: ClusterConnection;
  readonly #leases: PartitionLeases;
  readonly #local: ActorRouter;
  readonly #timeoutMs: number;
  readonly #failoverWaitMs: number;
  readonly #liveness: StreamLiveness;
  readonly #streamCancel: unknown;
  readonly #links: NodeLinks | undefined;
  readonly #subscriptions = new Map<number, Subscription>();
  readonly #onChange = (owned: ReadonlySet<number>) => this.#serve(owned);
  /** Checks of calls in flight to other nodes, run on every change of the lease table (one listener for all). */
  readonly #watchers = new Set<() => void>();
  readonly #onTable = () =>
    this.#watchers.forEach((check) => {
      check();
    });

  constructor(options: NatsActorRouterOptions) {
    this.#connection = options.connection;
    this.#leases = options.leases;
    this.#local = options.local;
    this.#timeoutMs = options.callTimeoutMs ?? 15_000;
    this.#failoverWaitMs = options.failoverWaitMs ?? 10_000;
    this.#liveness = options.streamLiveness ?? DEFAULT_STREAM_LIVENESS;
    // Every streaming protocol stops on { type: 'cancel' } (the chat stream's StreamControl).
    this.#streamCancel = options.streamCancel ?? { type: 'cancel' };
    this.#links = options.links;
    this.#leases.on('change', this.#onChange);
    this.#leases.on('table', this.#onTable);
    this.#serve(this.#leases.owned);
  }

  /** The subject owners answer on for `partition`. */
  subjectOf(partition: number): string {
    return `${this.#connection.prefix}.actor.${partition}`;
  }

  send(kind: string, actorId: string, message: unknown, deadline?: CallDeadline, trace?: Context): Promise<unknown> {
    const signal = deadlineOfCall(deadline, this.#timeoutMs);
    // Owned here: the runtime's call rejects at the deadline itself, so no second wait on it (as #route would).
    if (this.#leases.owns(this.#partitionOf(actorId))) return this.#local.send(kind, actorId, message, signal, trace);
    const timeoutMs = timeLeft(signal, this.#timeoutMs);
    return untilAborted(this.#route({ op: 'send', kind, actorId, message, timeoutMs }, trace, signal), signal);
  }

  signal(kind: string, actorId: string, message: unknown, trace?: Context): Promise<unknown> {
    const request = { op: 'signal' as const, kind, actorId, message, timeoutMs: this.#timeoutMs };
    return this.#route(request, trace, deadlineIn(this.#timeoutMs));
  }

  /** A local partition's stream stays in-process; another node's is relayed over NATS (remote-stream.ts). */
  stream(kind: string, actorId: string, message: unknown, timeoutMs?: number, trace?: Context): ActorStream {
    if (this.#leases.owns(this.#partitionOf(actorId)))
      return this.#local.stream(kind, actorId, message, timeoutMs, trace);
    const request = { op: 'stream' as const, kind, actorId, message, timeoutMs: this.#timeoutMs };
    // Its opening goes over NATS even if the partition comes here meanwhile (this node answers its own subjects).
    return openRemoteStream(this.#connection.nc, this.#liveness, (open) =>
      this.#route({ ...request, stream: { ...open, timeoutMs } }, trace, deadlineIn(this.#timeoutMs)),
    );
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

  async #route(request: ActorRequest, trace: Context | undefined, signal: AbortSignal): Promise<unknown> {
    const partition = this.#partitionOf(request.actorId);
    const deadline = timeOf(signal) ?? Date.now() + request.timeoutMs;
    let failoverUntil: number | undefined;
    let backoffMs = RESUBSCRIBE_POLL_MS;
    /**
     * No owner to ask now: the one named is gone, gave the partition back, or was just named and is not subscribed
     * yet (it subscribes once its claim is acknowledged; waiting only for yet another owner would then wait out
     * failoverWaitMs). Waits for the table to name an owner other than `former`, but no longer than a backoff
     * (25 ms, doubling to 500 ms), within failoverWaitMs and the call's deadline.
     */
    const awaitNextOwner = async (former: string | undefined, reason: string) => {
      failoverUntil ??= Math.min(deadline, Date.now() + this.#failoverWaitMs);
      await this.#ownerOtherThan(partition, former, Math.min(failoverUntil, Date.now() + backoffMs));
      backoffMs = Math.min(backoffMs * 2, MAX_RETRY_BACKOFF_MS);
      if (Date.now() >= failoverUntil) throw unavailable(`no node answers for partition ${partition} (${reason})`);
    };
    for (;;) {
      if (this.#leases.owns(partition) && request.op !== 'stream') return this.#runLocally(request, signal, trace);
      const tried = this.#leases.ownerOf(partition);
      if (tried !== undefined && !this.#leases.isLive(tried)) {
        // Its lease lapsed (it died or paused; a survivor is about to claim): a request sent to it now would only be
        // failed as "died in flight" once the claim lands.
        await awaitNextOwner(tried, `its owner ${tried} is gone`);
        continue;
      }
      try {
        const timeoutMs = Math.max(1, deadline - Date.now());
        return await this.#request(partition, { ...request, timeoutMs, deadlineAt: deadline }, tried, trace);
      } catch (error) {
        // The deadline passed on the way (the owner's answer or the wait for it): its reason, as the caller's.
        if (signal.aborted) throw signal.reason;
        if (!(error instanceof NotServedError)) throw error;
        await awaitNextOwner(error.formerOwner ?? tried, error.message);
      }
    }
  }

  /** Opens the stream on this node's runtime and relays it to the caller's inbox; the open's answer is null. */
  #relayStream(request: ActorRequest, open: StreamOpen & { timeoutMs?: number }, trace: Context | undefined): null {
    const local = this.#local.stream(request.kind, request.actorId, request.message, open.timeoutMs, trace);
    relayToCaller(this.#connection.nc, open, local, this.#streamCancel);
    return null;
  }

  #runLocally(request: ActorRequest, deadline: AbortSignal, trace: Context | undefined): Promise<unknown> {
    return request.op === 'send'
      ? this.#local.send(request.kind, request.actorId, request.message, deadline, trace)
      : this.#local.signal(request.kind, request.actorId, request.message, trace);
  }

  #request(partition: number, request: ActorRequest, owner: string | undefined, parent: Context | undefined) {
    return tracedHop(partition, owner, request.op, parent, (trace, took) =>
      this.#hop(partition, request, owner, trace, took),
    );
  }

  async #hop(partition: number, request: ActorRequest, owner: string | undefined, trace: Hop, took: Took) {
    const sent = { ...request, deadlineAt: request.deadlineAt ?? Date.now() + request.timeoutMs };
    const waitMs = request.timeoutMs + REQUEST_BACKSTOP_MS;
    // Every call to one owner takes the same way, so they arrive in the order they were made (a turn's supersede
    // signal before the turn: chat's routes/deps.ts). A stream's frames still come back over NATS.
    const link = owner && this.#links ? this.#leases.linkOf(owner) : undefined;
    let answer: ActorReply | undefined;
    if (owner && link && this.#links) {
      took('link');
      try {
        answer = (await this.#unlessOwnerDies(
          partition,
          owner,
          this.#links.call(owner, link, trace ? { ...sent, trace: carrierOf(trace) } : sent, waitMs),
        )) as ActorReply;
        routedCall.link.inc();
      } catch (error) {
        if (!(error instanceof LinkNotDeliveredError))
          throw asUnavailable(error, partition, request, `${owner}'s link`);
        // It never left this node: NATS is the other way there (and says when nobody serves the partition).
      }
    }
    if (!answer) {
      took('nats');
      const subject = this.subjectOf(partition);
      try {
        const answered = this.#connection.nc.request(subject, JSON.stringify(sent), {
          timeout: waitMs,
          ...(trace ? { headers: natsHeadersOf(trace) } : {}),
        });
        answer = (await (owner ? this.#unlessOwnerDies(partition, owner, answered) : answered)).json<ActorReply>();
        routedCall.nats.inc();
      } catch (error) {
        if (isNoResponders(error)) throw new NotServedError(`no responder on ${subject}`);
        throw asUnavailable(error, partition, request, subject);
      }
    }
    if ('error' in answer) {
      if (answer.error.name === MOVED)
        throw new NotServedError(answer.error.message, answer.error.details?.node as string);
      throw fromWire(answer.error);
    }
    return answer.value;
  }

  /**
   * `call`, unless `owner`'s node lease lapses first: it died with the call in flight, so no answer will come and
   * the call fails now (within a lease) instead of at its deadline (a JSON chat turn's is minutes). Not retried: the
   * dead node may have committed it. A partition that merely moved away is still answered by the node running the call.
   */
  #unlessOwnerDies<T>(partition: number, owner: string, call: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const check = () => {
        if (this.#leases.ownerOf(partition) === owner || this.#leases.liveNodes().includes(owner)) return;
        this.#watchers.delete(check);
        reject(unavailable(`node ${owner} died with the call in flight`));
      };
      this.#watchers.add(check);
      call.finally(() => this.#watchers.delete(check)).then(resolve, reject);
    });
  }

  /** Resolves true once this node holds `partition` or the table names a live owner other than `tried`. */
  #ownerOtherThan(partition: number, tried: string | undefined, until: number): Promise<boolean> {
    const moved = () => this.#leases.owns(partition) || (this.#leases.ownerOf(partition) ?? tried) !== tried;
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
      // One queue group for every node: two nodes that both answer for a partition for a moment (a lease moving, a
      // split healing) are handed each request once between them, so a call never runs twice.
      const subscription = this.#connection.nc.subscribe(this.subjectOf(partition), {
        queue: OWNERS_QUEUE,
        callback: (error, msg) => {
          if (!error) void this.#answer(partition, msg);
        },
      });
      this.#subscriptions.set(partition, subscription);
    }
  }

  async #answer(partition: number, msg: Msg): Promise<void> {
    let request: ActorRequest;
    try {
      request = msg.json<ActorRequest>();
    } catch (error) {
      return void msg.respond(JSON.stringify({ error: toWire(error) } satisfies ActorReply));
    }
    msg.respond(JSON.stringify(await this.answer(request, partition, msg.headers)));
  }

  /**
   * Runs a call another node routed here (through NATS or the link) and says how it went; never rejects. A
   * partition this node does not hold (any more) is answered "moved": the caller asks the next owner.
   */
  answer(request: ActorRequest, subjectPartition?: number, headers?: MsgHdrs): Promise<ActorReply> {
    return inServeSpan(request, headers, (trace) => this.#answerHere(request, subjectPartition, trace));
  }

  async #answerHere(
    request: ActorRequest,
    subjectPartition: number | undefined,
    trace: Context | undefined,
  ): Promise<ActorReply> {
    try {
      const partition = subjectPartition ?? this.#partitionOf(request.actorId);
      // Between the release decision and the unsubscription a request can still arrive: send the caller on.
      if (!this.#leases.owns(partition)) return notServedHere(this.#leases.nodeId, partition);
      // The caller's deadline, on this node's clock: the local runtime and its host run the call under it.
      const timeoutMs = remainingOf(request);
      if (timeoutMs <= 0) throw new DeadlineExceededError(`The call reached partition ${partition}'s owner too late`);
      return {
        value: request.stream
          ? this.#relayStream(request, request.stream, trace)
          : await this.#runLocally(request, deadlineIn(timeoutMs), trace),
      };
    } catch (error) {
      return { error: toWire(error) };
    }
  }
}

/** The answer of a node that does not hold the call's partition: the caller asks the table's next owner. */
export function notServedHere(nodeId: string, partition?: number): ActorReply {
  const which = partition === undefined ? 'the partition' : `partition ${partition}`;
  return { error: { name: MOVED, message: `${which} is not served by node ${nodeId}`, details: { node: nodeId } } };
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
