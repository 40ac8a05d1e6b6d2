// Main thread. Unary gRPC calls to the chain node, hand-written for the gateway's hot path: one POST per call,
// a 5-byte length-prefixed message each way, the status in the trailers (gRPC over HTTP/2, PROTOCOL-HTTP2.md).
// @grpc/grpc-js runs every call through resolving, retrying, load-balancing and filter layers, and node's http2
// client builds a Duplex and an AsyncResource per call: the calls go over an HTTP/2 client of our own (./h2/).
// Plaintext only, as the gateway's channel always was.
import type { H2Target } from './h2/channel.js';

export { H2Channel, type H2Target } from './h2/channel.js';
export type { H2Outcome } from './h2/unary-call.js';

const DEFAULT_PORT = 443; // as grpc-js, for a target without a port

/** The address of a gRPC target string; undefined for forms this client does not dial (several addresses, xds:). */
export function parseTarget(target: string): H2Target | undefined {
  if (target.startsWith('unix:')) {
    const path = target.startsWith('unix://') ? target.slice('unix://'.length) : target.slice('unix:'.length);
    return path ? { socketPath: path } : undefined;
  }
  let rest = target;
  if (rest.startsWith('dns:')) {
    rest = rest.slice('dns:'.length);
    // dns://authority/host:port names a DNS server; the system resolver is used either way.
    if (rest.startsWith('//')) rest = rest.slice(rest.indexOf('/', 2) + 1);
  } else if (rest.startsWith('ipv4:') || rest.startsWith('ipv6:')) {
    rest = rest.slice(5);
    if (rest.includes(',')) return undefined;
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) {
    return undefined;
  }
  const bracket = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(rest);
  if (bracket) return { host: bracket[1], port: Number(bracket[2] ?? DEFAULT_PORT) };
  const colon = rest.lastIndexOf(':');
  if (colon === -1) return rest ? { host: rest, port: DEFAULT_PORT } : undefined;
  const port = rest.slice(colon + 1);
  if (!/^\d{1,5}$/.test(port) || rest.indexOf(':') !== colon) return undefined;
  return { host: rest.slice(0, colon), port: Number(port) };
}
