// Main thread: the runtime's errors as they cross between nodes ({ name, message, code, details }) and back to the
// runtime's classes, so faces keep mapping them with instanceof: a DomainError keeps its code and details,
// ActorBusyError stays ActorBusyError, a remote timeout is the HostUnavailableError a local one gives.
import { ActorBusyError, CallCancelledError, DomainError, HostUnavailableError } from '../runtime/errors.js';

export interface WireError {
  name: string;
  message: string;
  code?: string;
  details?: Record<string, unknown>;
}

export function toWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  if (error instanceof DomainError) return { name: error.name, message: error.message, code: error.code, details: error.details };
  return { name: error.name, message: error.message };
}

/** Back to the classes the local runtime throws, keeping the remote message. */
export function fromWire(wire: WireError): Error {
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

/** The cluster's own unavailability, as the runtime says it, so faces answer it like a host that cannot take a call. */
export function unavailable(reason: string): HostUnavailableError {
  const error = new HostUnavailableError(-1, reason);
  error.message = `Actor unavailable: ${reason}`;
  return error;
}
