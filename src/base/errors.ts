// Thread: any (ground floor)
// The two errors every layer may throw (storage, actors and plugins alike), terminal or transient, and the one
// classification of a failure.

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
 * A failure that passes: the same call may succeed when sent again after `retryAfterSeconds` (a full mailbox, a
 * host restarting, a full disk, a lost write race, the cluster out of reach). A stable `code` says which; it crosses
 * threads and nodes with its code, details and retryAfterSeconds (runtime/wire-errors.ts). Each face answers it
 * with its "try again" answer (HTTP 503 with Retry-After, the USSD END text, an SSE or WebSocket error).
 */
/**
 * Every code a TransientError may carry, with when to try again by default and its meaning in one line
 * (docs/errors.md, `npm run docs:errors`, shows how each face answers it): a new code fails to compile without them.
 */
export const TRANSIENT_CODES = {
  actor_busy: {
    retryAfterSeconds: 1,
    meaning: "The actor's mailbox or its host's queue is full (backpressure): refused before any work",
  },
  host_unavailable: {
    retryAfterSeconds: 1,
    meaning: "The actor's host is restarting or stopping, or the call found no owner in time",
  },
  storage_unavailable: {
    retryAfterSeconds: 5,
    meaning: 'The disk is too full or its commit failed: nothing was stored',
  },
  revision_conflict: {
    retryAfterSeconds: 0,
    meaning: 'Another writer changed the record since it was read: nothing was stored; read it again and retry',
  },
  deadline_exceeded: {
    retryAfterSeconds: 1,
    meaning: "The call was not answered by its deadline (the face's step or request time): dropped if not yet run",
  },
  cluster_unreachable: {
    retryAfterSeconds: 1,
    meaning: 'NATS is out of reach (a partition, a leader being elected, a reconnect): cluster mode only',
  },
} as const satisfies Record<string, { retryAfterSeconds: number; meaning: string }>;
export type TransientCode = keyof typeof TRANSIENT_CODES;

export class TransientError<C extends TransientCode = TransientCode> extends Error {
  override readonly name: string = 'TransientError';
  constructor(
    readonly code: C,
    message: string,
    readonly retryAfterSeconds: number = TRANSIENT_CODES[code].retryAfterSeconds,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * What a failure is, by its type: `terminal`, a DomainError (the domain refused; sending it again gets the same
 * answer); `transient`, a TransientError (try again after its retryAfterSeconds); `fault`, anything else (a bug or
 * an unforeseen failure: logged as an error, answered as an internal one).
 */
export type FailureKind = 'terminal' | 'transient' | 'fault';

/** Reads a lower library's own error as the TransientError it means (undefined: it does not). */
export type TransientReading = (error: unknown) => TransientError | undefined;

const readings: TransientReading[] = [];

/**
 * Adds how a client library's errors read as transient (the cluster's NATS client: its timeouts and lost
 * connections): the adapter that opens the client adds it, on each thread that opens one, so no face or
 * runtime code knows the library, and its errors cross threads and nodes as TransientErrors.
 */
export function readTransient(reading: TransientReading): void {
  if (!readings.includes(reading)) readings.push(reading);
}

/** `error` as a TransientError when it is one or a reading makes it one; undefined otherwise. */
export function transientOf(error: unknown): TransientError | undefined {
  if (error instanceof TransientError) return error;
  for (const reading of readings) {
    const transient = reading(error);
    if (transient) return transient;
  }
  return undefined;
}

/** The one classification of a failure (see FailureKind): every face decides by it. */
export function failureKind(error: unknown): FailureKind {
  if (error instanceof DomainError) return 'terminal';
  return transientOf(error) ? 'transient' : 'fault';
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
