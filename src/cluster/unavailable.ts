// Thread: main
// The cluster's own unavailability, as the runtime says it, so faces answer it like a host that
// cannot take a call.
import { HostUnavailableError } from '../runtime/errors.js';

export function unavailable(reason: string): HostUnavailableError {
  const error = new HostUnavailableError(-1, reason);
  error.message = `Actor unavailable: ${reason}`;
  return error;
}
