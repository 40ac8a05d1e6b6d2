// Thread: main
// The seam between the faces and wherever actors run: given a kind and an id, deliver a message
// and get its reply, reach the actor outside its mailbox, or open a stream from it. The single-node runtime
// (actor-runtime.ts: actor hosts on worker threads, lean RPC over MessagePorts) is one implementation; a
// cluster mode routes the same calls to the node owning the actor (for example over NATS request/reply).
// Faces get an Actors (a router that also makes typed references and carries the actors' events): the runtime
// itself on one node, the cluster's router and event bus in cluster mode. Each call takes its caller's trace
// context (HttpRequest.trace: tracing on and sampled), which the actor's span is made under, and a send its
// deadline (deadline-signals.ts): the one deadline of the call, wherever it runs.
import type { Context } from '../telemetry/index.js';
import type { ActorEvent } from './messages.js';
import type { ActorProtocol, ProtocolShape, ReplyOf, TypedMessage } from './protocol.js';
import type { StreamChannel } from './stream-channel.js';

/**
 * A call's deadline: a deadline signal (deadlineIn, deadlineAt: it fires with a DeadlineExceededError at its time,
 * which travels with the call to the host and the owner node), or ms from now. A face makes one per request and
 * gives it to every call of that request.
 */
export type CallDeadline = AbortSignal | number;

export interface ActorStream {
  /** Messages the actor writes, and the control messages back (acknowledgements, cancel); the actor closes it when done. */
  readonly channel: StreamChannel;
  /** Settles when the actor's stream handler returns; rejects when the call failed (refused, host gone). */
  readonly done: Promise<void>;
}

export interface ActorRouter {
  /**
   * Sends `message` to the actor's mailbox and resolves with its reply. Refused at once with ActorBusyError
   * when the actor or its host is full. At its deadline the call rejects with the deadline's DeadlineExceededError
   * and the work is cancelled (dropped if queued, not committed if running). A refusal of the actor rejects with
   * its DomainError.
   */
  send(kind: string, actorId: string, message: unknown, deadline?: CallDeadline, trace?: Context): Promise<unknown>;
  /** Reaches an actor outside its mailbox; resolves `undefined` when it is not in memory. */
  signal(kind: string, actorId: string, message: unknown, trace?: Context): Promise<unknown>;
  /** Opens a stream from the actor, running in its mailbox like a send. */
  stream(kind: string, actorId: string, message: unknown, timeoutMs?: number, trace?: Context): ActorStream;
}

/** What the faces use to reach actors: routing, typed references (actors.ref(PROTOCOL, id)) and the actors' events. */
export interface Actors extends ActorRouter {
  /**
   * The actor `actorId` of the kind `protocol` declares: what it is sent and what it answers are typed. `trace`:
   * the caller's context, given to each call made through the reference.
   */
  ref<S extends ProtocolShape>(protocol: ActorProtocol<S>, actorId: string, trace?: Context): ActorRef<S>;
  /** Receives every event that actors publish (wherever they run); answers the unsubscription. */
  onEvent(listener: (event: ActorEvent) => void): () => void;
}

/** One actor, typed by its kind's protocol: the reply type follows from the message's `type`. */
export class ActorRef<S extends ProtocolShape> {
  constructor(
    private readonly router: ActorRouter,
    readonly kind: string,
    readonly id: string,
    readonly trace?: Context,
  ) {}

  // The casts below are the thread boundary: the actor of this kind implements Actor<S> (the same declaration).
  send<M extends TypedMessage<S['calls']>>(message: M, deadline?: CallDeadline): Promise<ReplyOf<S['calls'], M>> {
    return this.router.send(this.kind, this.id, message, deadline, this.trace) as Promise<ReplyOf<S['calls'], M>>;
  }

  /** `undefined`: the actor is not in memory, so the signal was not delivered. */
  signal<M extends TypedMessage<S['signals']>>(message: M): Promise<ReplyOf<S['signals'], M> | undefined> {
    return this.router.signal(this.kind, this.id, message, this.trace) as Promise<ReplyOf<S['signals'], M> | undefined>;
  }

  stream(message: S['stream'], timeoutMs?: number): ActorStream {
    return this.router.stream(this.kind, this.id, message, timeoutMs, this.trace);
  }
}

/** An Actors over `router` (send, signal, stream) whose events come from `events` (in cluster mode: the event bus). */
export function actorsOver(router: ActorRouter, events: Pick<Actors, 'onEvent'>): Actors {
  const actors: Actors = {
    send: (kind, actorId, message, deadline, trace) => router.send(kind, actorId, message, deadline, trace),
    signal: (kind, actorId, message, trace) => router.signal(kind, actorId, message, trace),
    stream: (kind, actorId, message, timeoutMs, trace) => router.stream(kind, actorId, message, timeoutMs, trace),
    ref: (protocol, actorId, trace) => new ActorRef(actors, protocol.kind, actorId, trace),
    onEvent: (listener) => events.onEvent(listener),
  };
  return actors;
}
