// Ground floor, both threads. The one error every layer may throw: storage, actors and plugins alike.

/**
 * A refusal of the domain, thrown by worker-side code (actors, plugins): a stable `code` and plain `details`,
 * no wire format. Each face maps it to its answer on the main thread (HTTP status and body, USSD END text,
 * SSE or WebSocket error). It crosses threads with its code and details (rpc.ts).
 */
export class DomainError<C extends string = string> extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: C,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}
