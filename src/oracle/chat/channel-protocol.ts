// Thread: any (shared, pure: no state of its own)
// What the event channel sends from the main thread to a chat actor (runtime.signal: outside the mailbox, so
// it reaches an actor whose turn is waiting for the client). Plain data: it crosses threads.

/** A client's answer to a browser tool call (`tool_result`) or an agent-UI action (`action_call_result`). */
export interface ClientResultSignal {
  type: 'client_result';
  kind: 'browser' | 'action';
  toolCallId: string;
  /** The authenticated user of the socket that answered (the main thread sets it, never the client). */
  userDid: string;
  result?: unknown;
  /** The client's error text: the call fails with it. */
  error?: string;
}

/** The main thread found no socket of the session when a client call was published: the call fails at once. */
export interface ClientUnreachableSignal {
  type: 'client_unreachable';
  toolCallId: string;
}

export type ChannelSignal = ClientResultSignal | ClientUnreachableSignal;

export function isChannelSignal(message: { type?: unknown }): message is ChannelSignal {
  return message.type === 'client_result' || message.type === 'client_unreachable';
}
