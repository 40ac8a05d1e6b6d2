// Thread: main
// Environment variables of the protocol query gateway (validated with the others in src/app/config.ts).
import { existsSync } from 'node:fs';
import * as v from 'valibot';
import { boolean, integer, list, oneOf } from '../base/env-schema.js';
import { parseTarget } from './grpc-h2.js';

/** A PEM file that exists (read at start-up). */
const pemFile = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.check((path) => path === '' || existsSync(path), 'no such file'),
    v.transform((path) => path || undefined),
  ),
);

/** host:port, or a gRPC target URI such as dns:///node:9090, grpcs://node:443 or unix:/run/node.sock. */
const GRPC_TARGET = /^(?:[a-z][a-z0-9+.-]*:.+|[^\s/:]+:\d{1,5}|\[[0-9a-fA-F:.]+\]:\d{1,5})$/;
/** Empty, or path segments each starting with `/`, no trailing slash. */
const PREFIX = /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/;

export const gatewayEnv = {
  /**
   * The chain node's gRPC address; unset: an embedded local query node over sample data is started. TLS with
   * grpcs://host:port or https://host:port; several addresses (pick-first) with ipv4:a:port,b:port or a DNS name
   * with several records.
   */
  GATEWAY_GRPC_TARGET: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(GRPC_TARGET, 'must be host:port or a gRPC target URI'),
      v.check(
        (target) => parseTarget(target) !== undefined,
        'must be host:port, grpcs://host:port (TLS), dns:///host:port, ipv4:addr:port[,addr:port...], ipv6:[addr]:port[,...] or unix:path',
      ),
    ),
  ),
  /**
   * Where the route table comes from: `auto` (the node's FileDescriptors reflection, with the bundled .proto
   * files for the services it does not describe; bundled only when it has no reflection or no
   * GATEWAY_GRPC_TARGET is set), `bundled`, or `reflection` (the node's only, start-up fails without).
   */
  GATEWAY_DESCRIPTORS: oneOf(['auto', 'bundled', 'reflection'], 'auto'),
  /** Deadline of one upstream call; past it the answer is 504. */
  GATEWAY_TIMEOUT_MS: integer(10_000, 1, 600_000),
  /** TLS targets: CA certificates (PEM) trusted besides node's roots and the system store; default none. */
  GATEWAY_GRPC_CA_FILE: pemFile,
  /** TLS targets: a client certificate and its key (PEM), for a node that asks for one (mTLS); default none. */
  GATEWAY_GRPC_CERT_FILE: pemFile,
  GATEWAY_GRPC_KEY_FILE: pemFile,
  /**
   * The largest answer message one query may return, in bytes (default 4 MiB, gRPC's own default): checked on
   * its length prefix before it is buffered; past it the answer is 502. The start-up descriptor read may be larger.
   */
  GATEWAY_MAX_RESPONSE_BYTES: integer(4 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  /**
   * Keepalive PINGs on the node connection every this many ms, idle or not (default 0: none; at least 10000
   * when set). Doubled after the node answers GOAWAY too_many_pings, as grpc-go and grpc-js do.
   */
  GATEWAY_KEEPALIVE_MS: v.pipe(
    integer(0, 0, 24 * 3600 * 1000),
    v.check((ms) => ms === 0 || ms >= 10_000, 'must be 0 (off) or at least 10000'),
  ),
  /** Mounts the routes under this path prefix, e.g. /api/protocol (default: none). */
  GATEWAY_PREFIX: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.transform((s) => {
        const trimmed = s.replace(/\/+$/, '');
        return trimmed === '' || trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
      }),
      v.regex(PREFIX, 'must be a URL path such as /api/protocol'),
    ),
    '',
  ),
  /** Adds the path aliases of older ixo builds (/ixo/collection/{id}, /ixo/token/{minter}, ...). */
  GATEWAY_LEGACY_ROUTES: boolean(false),
  /** When set, every gateway request needs one of these keys in `x-api-key`. */
  GATEWAY_API_KEYS: list(),
};
