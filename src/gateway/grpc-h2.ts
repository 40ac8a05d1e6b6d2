// Thread: main
// Unary gRPC calls to the chain node, hand-written for the gateway's hot path: one POST per call,
// a 5-byte length-prefixed message each way, the status in the trailers (gRPC over HTTP/2, PROTOCOL-HTTP2.md).
// @grpc/grpc-js runs every call through resolving, retrying, load-balancing and filter layers, and node's http2
// client builds a Duplex and an AsyncResource per call: the calls go over an HTTP/2 client of our own (./h2/),
// cleartext or TLS, to one address or several (pick-first).
export { H2Channel, type ChannelState, type H2Target } from './h2/channel.js';
export { tlsContext, type TlsFiles } from './h2/dial.js';
export { parseTarget, type H2Address, type ParsedTarget } from './h2/target.js';
export type { H2Outcome } from './h2/unary-call.js';
