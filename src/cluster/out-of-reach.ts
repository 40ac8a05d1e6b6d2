// Thread: any (wherever a NATS connection is)
// Whether an error of the NATS client says that this node cannot reach its cluster for now (a partition, a leader
// being elected, its connection reconnecting): a failure that passes, the TransientError `cluster_unreachable`
// (errors.ts), answered 503 with Retry-After, never 500. Read by the client's classes, on the thread that met it:
// connectCluster adds the reading (readTransient), so such an error crosses threads and nodes as that
// TransientError (runtime/wire-errors.ts) and no face knows NATS.
import { jserrors, JetStreamApiError } from '@nats-io/jetstream/internal';
import {
  ClosedConnectionError,
  ConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { readTransient, TransientError } from '../base/errors.js';

export type ClusterUnreachable = TransientError<'cluster_unreachable'>;

/** This node's own finding that the cluster is out of reach for now (a stream without a leader, a reader behind). */
export function clusterUnreachable(message: string, cause?: unknown): ClusterUnreachable {
  const error = new TransientError('cluster_unreachable', message);
  if (cause !== undefined) Object.assign(error, { cause });
  return error;
}

/**
 * JetStream's own "not now" (status 503; its `code` is the API's err_code, 10008): "JetStream system temporarily
 * unavailable" while it has no meta leader, or on a server just back from a pause or a partition.
 */
export function isJetStreamNotNow(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.status === 503;
}

/**
 * The NATS client's errors that mean the cluster is out of reach for now: a request unanswered in time, no
 * responders (`JetStreamNotEnabled`: a publish no JetStream responder answered), a connection closed or being
 * re-made, JetStream's "not now". As `cluster_unreachable`, with the client's message; undefined for any other.
 */
export function outOfReach(error: unknown): ClusterUnreachable | undefined {
  const passing =
    error instanceof TimeoutError ||
    error instanceof NoRespondersError ||
    error instanceof RequestError ||
    error instanceof ClosedConnectionError ||
    error instanceof ConnectionError ||
    error instanceof jserrors.JetStreamNotEnabled ||
    isJetStreamNotNow(error);
  if (!passing) return undefined;
  const transient = clusterUnreachable((error as Error).message, error);
  if ((error as Error).stack !== undefined) transient.stack = (error as Error).stack;
  return transient;
}

/** Adds the reading on this thread (each thread that connects to NATS calls it; once is enough). */
export function readOutOfReach(): void {
  readTransient(outOfReach);
}
