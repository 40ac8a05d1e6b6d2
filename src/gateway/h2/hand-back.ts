// Thread: main (the gateway's HTTP/2 client)
// Calls a connection gives back unsent, for another connection to carry.
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { UnaryCall } from './unary-call.js';

/**
 * Calls the node never saw go to another connection, once each (so a node that refuses every connection
 * cannot make a call go round forever): a second time they fail UNAVAILABLE. `counted` false: the connection
 * never reached the node, so its queued calls go on without using their one retry.
 */
export function handBack(
  calls: UnaryCall[],
  events: { retry(calls: UnaryCall[]): void },
  details = 'Connection closed by the node before the call was sent',
  counted = true,
): void {
  const again: UnaryCall[] = [];
  for (const call of calls) {
    call.cancel = undefined;
    if (!counted) {
      again.push(call);
    } else if (call.retried) {
      call.settle(GrpcStatus.UNAVAILABLE, details);
    } else {
      call.retried = true;
      again.push(call);
    }
  }
  if (again.length > 0) events.retry(again);
}

/**
 * A dropped connection's calls fail with `code`. `retryUnanswered` (it dropped with no GOAWAY): calls without response
 * headers go out once more on another connection, for the race where the node closed an idle connection as a call
 * was written. Every call of this client is a query, safe to repeat.
 */
export function failCalls(
  calls: UnaryCall[],
  code: number,
  details: string,
  retryUnanswered: boolean,
  events: { retry(calls: UnaryCall[]): void },
): void {
  if (retryUnanswered) {
    handBack(
      calls.filter((call) => !call.headers),
      events,
      details,
    );
  }
  for (const call of calls) {
    if (retryUnanswered && !call.headers) continue;
    call.cancel = undefined;
    call.settle(code, details);
  }
}
