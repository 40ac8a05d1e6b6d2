// Thread: any
// An actor kind's protocol, declared once: its name, the messages its mailbox takes with the reply of each,
// the signals it takes outside the mailbox, and the message that opens a stream. Both sides use the same
// declaration: the main thread sends through an ActorRef (runtime.ref), whose reply type follows from the
// message's `type`; the actor implements Actor<Shape> and receives only the declared messages.
import type { StreamChannel } from './stream-channel.js';
import type { Context } from '../telemetry/index.js';

/** One message and its reply. */
export interface Call<M = unknown, R = unknown> {
  message: M;
  reply: R;
}

export interface ProtocolShape {
  /** Mailbox messages, a union of Call. */
  calls: Call;
  /** Signals (outside the mailbox), a union of Call; `never` when the kind takes none. */
  signals: Call;
  /** The message that opens a stream; `never` when the kind does not stream. */
  stream: unknown;
}

export type MessageOf<C extends Call> = C['message'];
/** The reply declared for the message `M`: of each Call in the union, the one whose message `M` is. */
export type ReplyOf<C extends Call, M> =
  C extends Call<infer Message, infer Reply> ? (M extends Message ? Reply : never) : never;
/** The messages of `C` a ref can send: each names its reply by its `type`. */
export type TypedMessage<C extends Call> = Extract<MessageOf<C>, { type: string }>;

/** The declaration of one actor kind: `shape` is a type only (never read at run time). */
export interface ActorProtocol<S extends ProtocolShape> {
  readonly kind: string;
  readonly shape?: S;
}

/** The shape a protocol declares, for `implements Actor<ShapeOf<typeof X>>`. */
export type ShapeOf<P> = P extends ActorProtocol<infer S> ? S : never;

export function declareProtocol<S extends ProtocolShape>(kind: string): ActorProtocol<S> {
  return { kind };
}

/** The worker side of a protocol. */
export interface Actor<S extends ProtocolShape = ProtocolShape> {
  /**
   * Handles one message; runs in the actor's mailbox, so never concurrently with another. `cancelled` fires
   * when the caller gave up: check it (`cancelled?.throwIfAborted()`) right before committing. Refusals are
   * thrown as DomainError (runtime/errors.ts); each face maps them to its wire answer. `trace`: tracing on and
   * the call part of a recorded trace, the context of the call's span, for the spans of what it does (a commit,
   * a provider call); undefined otherwise.
   */
  receive(message: MessageOf<S['calls']>, cancelled?: AbortSignal, trace?: Context): Promise<S['calls']['reply']>;
  /** Handles one message whose answer is a stream of frames written to `channel`; runs in the mailbox. */
  stream?(message: S['stream'], channel: StreamChannel, cancelled?: AbortSignal, trace?: Context): Promise<void>;
  /** Handles a signal outside the mailbox (e.g. abort while a stream is running). */
  signal?(message: MessageOf<S['signals']>): S['signals']['reply'];
  /** False while the actor holds work that must not be dropped. */
  isIdle?(): boolean;
  dispose?(): void;
}
