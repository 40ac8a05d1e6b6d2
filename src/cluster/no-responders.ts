// Thread: main
// How nats-core says that nobody subscribes to a request's subject (its server answered 503 at once).
import { NoRespondersError, RequestError } from '@nats-io/transport-node';

export function isNoResponders(error: unknown): boolean {
  return error instanceof NoRespondersError || (error instanceof RequestError && error.isNoResponders());
}
