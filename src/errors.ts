// Thread: any (ground floor)
// The one error every layer may throw: storage, actors and plugins alike.

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

/**
 * A start-up the operator can fix (a variable's value, the directory it names, the platform): main prints the
 * one-line message, which names the variable, and exits 78 (EX_CONFIG), which the systemd units do not restart on.
 */
export class StartupRefusal extends Error {
  override readonly name = 'StartupRefusal';
  readonly exitCode = 78;
  constructor(
    /** The variable to change (DATA_DIR, PIN_ENCRYPTION_KEY, HTTP_ENGINE, ...). */
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}
