// Thread: any
// Both threads, every node. The one codec for errors that cross a boundary: between the main thread and an actor
// host (rpc.ts), and between nodes (the cluster's router and remote streams). An error crosses as plain data
// (name, message, a numeric status when it has one; a DomainError also its code and details, a TransientError its
// code, details and retryAfterSeconds; between threads its stack too) and comes back as the runtime's own class,
// so faces keep mapping it with instanceof. A library's error that reads as transient (transientOf: the NATS
// client's timeouts) crosses as that TransientError. What an error *means* on arrival (a host's cancelled call is
// its unavailability) is the receiver's policy, not the codec's.
import { DomainError, TRANSIENT_CODES, TransientError, transientOf, type TransientCode } from '../base/errors.js';
import {
  ActorBusyError,
  CallCancelledError,
  DeadlineExceededError,
  HostClosingError,
  HostUnavailableError,
} from './errors.js';

/** An error as it crosses. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  details?: Record<string, unknown>;
  /** The error's own status, when it carries a number there (JetStream's API errors: 503 is "not now"). */
  status?: number;
  /** A TransientError's: when to try again. */
  retryAfterSeconds?: number;
}

/** `error` as plain data; its stack only when asked (between threads: one process, one log). */
export function toWire(thrown: unknown, withStack = false): WireError {
  const error = transientOf(thrown) ?? thrown;
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const wire: WireError = { name: error.name, message: error.message };
  if (withStack && error.stack !== undefined) wire.stack = error.stack;
  const { status } = error as { status?: unknown };
  if (typeof status === 'number') wire.status = status;
  if (error instanceof DomainError || error instanceof TransientError) {
    wire.code = error.code;
    if (error.details !== undefined) wire.details = error.details;
  }
  if (error instanceof TransientError) wire.retryAfterSeconds = error.retryAfterSeconds;
  return wire;
}

/** Back to the class the runtime throws (a plain Error of the same name otherwise), with the sender's message. */
export function fromWire(wire: WireError): Error {
  let error: Error;
  switch (wire.name) {
    case 'DomainError':
      error = new DomainError(wire.code ?? 'unknown', wire.message, wire.details);
      break;
    case 'TransientError':
      error = new TransientError(transientCode(wire.code), wire.message, wire.retryAfterSeconds, wire.details);
      break;
    case 'ActorBusyError':
      error = new ActorBusyError(wire.message);
      break;
    case 'HostUnavailableError':
      error = new HostUnavailableError(-1, '');
      break;
    case 'DeadlineExceededError':
      error = new DeadlineExceededError();
      break;
    case 'CallCancelledError':
      error = new CallCancelledError();
      break;
    case 'HostClosingError':
      error = new HostClosingError();
      break;
    default:
      error = new Error();
      error.name = wire.name;
  }
  error.message = wire.message;
  if (wire.stack !== undefined) error.stack = wire.stack;
  if (wire.status !== undefined && !('status' in error)) Object.assign(error, { status: wire.status });
  return error;
}

/** A transient code from another node (one of a newer version may send a code this one has not): unknown ones as
 * `host_unavailable`, the answer of a call that could not be served now. */
function transientCode(code: string | undefined): TransientCode {
  return code !== undefined && Object.hasOwn(TRANSIENT_CODES, code) ? (code as TransientCode) : 'host_unavailable';
}
