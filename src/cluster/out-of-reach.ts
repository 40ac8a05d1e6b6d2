// Thread: any (pure)
// Whether an error says that this node cannot reach its NATS cluster for now (a partition, a
// leader being elected, its connection reconnecting): a passing state, answered 503 with Retry-After, never 500.
// By name (and JetStream's status), so an error that crossed a thread or a node (runtime/wire-errors.ts) still
// counts.

/** nats-core's and JetStream's classes, by name. `JetStreamNotEnabled`: a publish no JetStream responder answered. */
const OUT_OF_REACH = new Set([
  'TimeoutError',
  'NoResponders',
  'RequestError',
  'ClosedConnectionError',
  'ConnectionError',
  'JetStreamNotEnabled',
]);

/**
 * JetStream's own "not now" (status 503; its `code` is the API's err_code, 10008): "JetStream system temporarily
 * unavailable" while it has no meta leader, or on a server just back from a pause or a partition.
 */
export function isJetStreamNotNow(error: unknown): boolean {
  return error instanceof Error && error.name === 'JetStreamApiError' && (error as { status?: unknown }).status === 503;
}

export function isClusterOutOfReach(error: unknown): boolean {
  return error instanceof Error && (OUT_OF_REACH.has(error.name) || isJetStreamNotNow(error));
}

/** An error of this node's own that counts as the cluster out of reach for now (a 503): a TimeoutError by name. */
export const passingTimeout = (message: string): Error => Object.assign(new Error(message), { name: 'TimeoutError' });
