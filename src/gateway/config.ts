// Environment variables of the protocol query gateway (validated with the others in src/config.ts).
import * as v from 'valibot';
import { boolean, integer, list, oneOf } from '../env-schema.js';
import { parseTarget } from './grpc-h2.js';

/** host:port, or a gRPC target URI such as dns:///node:9090 or unix:/run/node.sock. */
const GRPC_TARGET = /^(?:[a-z][a-z0-9+.-]*:.+|[^\s/:]+:\d{1,5}|\[[0-9a-fA-F:.]+\]:\d{1,5})$/;
/** Empty, or path segments each starting with `/`, no trailing slash. */
const PREFIX = /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/;

export const gatewayEnv = {
  /** The chain node's gRPC address; unset: an embedded local query node over sample data is started. */
  GATEWAY_GRPC_TARGET: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(GRPC_TARGET, 'must be host:port or a gRPC target URI'),
      v.check((target) => parseTarget(target) !== undefined, 'must be one address: host:port, dns:///host:port, ipv4:, ipv6: or unix:path'),
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
