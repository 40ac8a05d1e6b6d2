// Thread: main
// What a failed HTTP/2 connection tells its calls and the node.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ConnectionError, ErrorCode, goawayFrame } from './frames.js';

/** A node that took the connection and never spoke HTTP/2 gets the hint (may be a TLS port); a refusal does not. */
export function withPlaintextHint(details: string, connectedWithoutHttp2: boolean, hint: string | undefined): string {
  return connectedWithoutHttp2 && hint ? `${details} (${hint})` : details;
}

/**
 * The node broke the protocol: its calls fail INTERNAL and the GOAWAY says why. Before its first SETTINGS the peer is
 * not an HTTP/2 node at all (an HTTP/1 port, say): UNAVAILABLE, as grpc-js answers a connection that never became
 * ready, so a misconfigured upstream reads as one that cannot be reached.
 */
export function protocolFailure(
  error: unknown,
  settingsReceived: boolean,
): { status: number; details: string; lastFrame: Buffer } {
  const code = error instanceof ConnectionError ? error.code : ErrorCode.INTERNAL_ERROR;
  const message = (error as Error).message;
  const [status, what] = settingsReceived
    ? [GrpcStatus.INTERNAL, 'HTTP/2 protocol error from the node']
    : [GrpcStatus.UNAVAILABLE, 'The node does not speak HTTP/2'];
  return { status, details: `${what}: ${message}`, lastFrame: goawayFrame(0, code, message.slice(0, 200)) };
}
