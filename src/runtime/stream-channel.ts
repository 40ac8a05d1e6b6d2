// Thread: any
// The two ends of an actor stream, as the runtime hands them out: the actor writes messages,
// the caller reads them and answers with control messages (an acknowledgement that opens the writer's window
// again, which is how a slow reader holds back the writer; or a cancel). Within one node a channel is a
// MessagePort of a MessageChannel whose other end went to the actor host (MessagePort has exactly these
// methods); a cluster transport implements the same three over its own wire (for example a pair of NATS
// subjects), so faces never depend on how the stream travels.
export interface StreamChannel<In = unknown, Out = unknown> {
  /** Each message from the other end, in order; the reader names the type its protocol declares (not checked at run time). */
  on<M extends In = In>(event: 'message', listener: (message: M) => void): unknown;
  /** One message to the other end. */
  postMessage(message: Out): void;
  /** Ends the channel for both sides; later messages are dropped. */
  close(): void;
}
