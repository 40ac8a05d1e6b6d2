// Thread: main
// The one place where the environment is read and validated. Each face contributes its variables;
// a bad value stops start-up with a message naming the variable and what is wrong with it.
import { availableParallelism } from 'node:os';
import * as v from 'valibot';
import { boolean, integer, list, oneOf, text } from '../base/env-schema.js';
import { isValidAddressPattern } from '../http/client-address.js';
import { isValidProxyPattern } from '../http/proxy-trust.js';
import { ussdConfigProblems, ussdEnv } from '../ussd/config.js';
import { oracleEnv } from '../oracle/config.js';
import { gatewayEnv } from '../gateway/config.js';
import { metricsEnv } from '../metrics/config.js';
import { playgroundEnv } from '../playground/config.js';
import { clusterConfigProblems, clusterEnv } from '../cluster/config.js';
import { telemetryEnv } from '../telemetry/config.js';

export const coreEnv = {
  NODE_ENV: text('development'),
  PORT: integer(3000, 0, 65535),
  HOST: text('0.0.0.0'),
  /** The front door's engine: auto (uWS when a native build loads, else node), uws, or node (node:http). */
  HTTP_ENGINE: oneOf(['auto', 'uws', 'node'], 'auto'),
  /** The portable engine: a request's headers must come within this of its first byte (uWS: its own 10 s)... */
  HTTP_HEADERS_TIMEOUT_MS: integer(10_000, 100, 300_000),
  /** ...and all of it, its body included, within this (at least the headers' time); else 408 and the close. */
  HTTP_REQUEST_TIMEOUT_MS: integer(10_000, 100, 300_000),
  /** Frames (Socket.IO: packets) a WebSocket client may send per second; past it its socket is closed (1008). */
  WS_MAX_FRAMES_PER_SECOND: integer(100, 1, 100_000),
  DATA_DIR: text('./data'),
  /** Below this much free space on DATA_DIR's disk, writes are refused before they reach LMDB (0: no floor). */
  DATA_DIR_MIN_FREE_BYTES: integer(64 * 1024 * 1024, 0),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  ACTOR_THREADS: integer(Math.max(1, availableParallelism() - 1), 1, 64),
  ACTOR_IDLE_SECONDS: integer(60, 1),
  ACTOR_MAILBOX_LIMIT: integer(100, 1),
  ACTOR_HOST_QUEUE_LIMIT: integer(10_000, 1),
  BODY_LIMIT_BYTES: integer(1024 * 1024, 1024),
  SHUTDOWN_TIMEOUT_MS: integer(10_000, 100),
  /** During a drain, the server waits until no request has arrived on an open connection for this long. */
  SHUTDOWN_QUIET_MS: integer(1_000, 0, 60_000),
  /** During a drain, requests on open connections are served for this long, then refused (at most the drain). */
  SHUTDOWN_SERVE_MS: integer(5_000, 0),
  RATE_LIMIT_MAX: integer(100, 1),
  RATE_LIMIT_WINDOW_SECONDS: integer(60, 1),
  RATE_LIMIT_ALLOWLIST: v.pipe(
    list(),
    v.check(
      (entries) => entries.every(isValidAddressPattern),
      'must be a comma-separated list of IP addresses or CIDRs',
    ),
  ),
  /** true alone trusts one proxy hop (the socket peer's X-Forwarded-For entry). */
  /** A streamed answer (SSE) is closed when this many bytes were written since its socket last took data... */
  SSE_MAX_BUFFER_BYTES: integer(256 * 1024, 16 * 1024, 64 * 1024 * 1024),
  /** ...or when its socket has taken nothing for this long while data waits (a reader that never reads). */
  SSE_STALL_TIMEOUT_SECONDS: integer(30, 1, 3600),
  TRUST_PROXY_ENABLED: boolean(false),
  /** Number of proxy hops in front of the server (0 = unset); trusts proxies by itself. */
  TRUST_PROXY_HOPS: integer(0, 0, 16),
  /** Proxy addresses/CIDRs (or loopback, linklocal, uniquelocal) whose X-Forwarded-For is believed; trusts proxies by itself. */
  TRUSTED_PROXIES: v.pipe(
    list(),
    v.check(
      (entries) => entries.every(isValidProxyPattern),
      'must be a comma-separated list of IP addresses, CIDRs, or loopback/linklocal/uniquelocal',
    ),
  ),
  CORS_ORIGIN: text('*'),
  OPERATOR_TOKEN: text(),
};

const envSchema = v.object({
  ...coreEnv,
  ...ussdEnv,
  ...oracleEnv,
  ...gatewayEnv,
  ...metricsEnv,
  ...playgroundEnv,
  ...clusterEnv,
  ...telemetryEnv,
});

export type Config = v.InferOutput<typeof envSchema>;

/** What one face's code may read of the configuration: the server's own variables (metrics are everyone's) and the face's. */
type Slice<E extends v.ObjectEntries> = v.InferOutput<
  v.ObjectSchema<typeof coreEnv & typeof metricsEnv & E, undefined>
>;
export type UssdConfig = Slice<typeof ussdEnv>;
export type OracleConfig = Slice<typeof oracleEnv>;
export type GatewayConfig = Slice<typeof gatewayEnv>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    // One problem fits one line (what an operator reads in the journal); several get one line each.
    super(
      problems.length === 1
        ? `Invalid configuration: ${problems[0]}`
        : `Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

/** Reads the configuration from environment variables (empty values count as unset). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(envSchema.entries)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') input[key] = value;
  }
  const result = v.safeParse(envSchema, input);
  if (result.success) {
    const problems = [...ussdConfigProblems(result.output), ...clusterConfigProblems(result.output)];
    if (problems.length === 0) return result.output;
    throw new ConfigError(problems);
  }
  throw new ConfigError(
    result.issues.map((issue) => {
      const name = String(issue.path?.[0]?.key ?? 'environment');
      return `${name}=${shown(name, input[name] ?? '')}: ${issue.message}`;
    }),
  );
}

/** Secrets are never echoed into a journal: their length stands in for a value that is wrong. */
const SECRET = /(_KEY|_TOKEN|_SECRET|_PASSWORD)$/;

function shown(name: string, value: string): string {
  return SECRET.test(name) && value !== '' ? `<${value.length} characters, not shown>` : JSON.stringify(value);
}
