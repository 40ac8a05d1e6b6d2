// Thread: any (pure)
// Environment variables of cluster mode. NATS_URL switches it on; the rest only matter then.
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import * as v from 'valibot';
import { boolean, integer, list, text } from '../base/env-schema.js';

const NATS_URL_ENTRY = /^(nats|tls):\/\/[^\s/?#]+(:\d{1,5})?\/?$|^[^\s/:?#]+:\d{1,5}$/;

export const clusterEnv = {
  /** Comma-separated NATS server URLs (nats://h1:4222,nats://h2:4222); set = cluster mode. */
  NATS_URL: v.pipe(
    list(),
    v.check(
      (urls) => urls.every((url) => NATS_URL_ENTRY.test(url)),
      'must be a comma-separated list of nats://host:port (or tls://host:port) URLs',
    ),
  ),
  /** This node's name in the cluster (leases, health); default hostname:PORT. */
  NODE_ID: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^[\w.:@-]{1,128}$/, 'must be 1-128 letters, digits or . : @ _ -')),
  ),
  /** Replicas of every KV bucket and stream; default 3, or the cluster's server count when fewer. */
  NATS_REPLICAS: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^[1-5]$/, 'must be a whole number from 1 to 5'), v.transform(Number)),
  ),
  /** A NATS credentials file (JWT + nkey seed), for an operator-mode NATS. */
  NATS_CREDS: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.check((path) => existsSync(path), 'must name an existing credentials file'),
    ),
  ),
  NATS_TOKEN: text(),
  /**
   * Comma-separated monitoring URLs of the NATS servers (http://h1:8222,...): read at start-up for each server's
   * version and sync_interval. Unset: the node cannot tell whether acknowledgements are synced and says so loudly.
   */
  NATS_MONITOR_URL: v.pipe(
    list(),
    v.check(
      (urls) => urls.every((url) => /^https?:\/\/[^\s/?#]+(:\d{1,5})?\/?$/.test(url)),
      'must be a comma-separated list of http://host:port URLs',
    ),
  ),
  /**
   * How long a starting node waits for NATS and JetStream before it gives up (exit 1); 0, the default, waits as
   * long as it takes (a node started before NATS, or during its maintenance, starts once a quorum is there).
   */
  NATS_START_TIMEOUT_SECONDS: integer(0, 0),
  /** Start even when a NATS server acknowledges writes before fsyncing them (an operator accepting that risk). */
  NATS_ALLOW_UNSYNCED_ACKS: boolean(false),
  /**
   * The node link: a TCP port on which this node takes the calls other nodes route to its partitions, instead of
   * NATS request/reply (docs/cluster-routing.md "The node link"). Off: every routed call goes through NATS.
   */
  CLUSTER_LINK: boolean(true),
  /**
   * Address the link listens on and other nodes connect to; default HOST when it names one address, else the
   * address this node reaches NATS from.
   */
  CLUSTER_LINK_HOST: text(),
  /** The link's port; 0, the default, takes any free one (it is advertised in the lease table). */
  CLUSTER_LINK_PORT: integer(0, 0, 65_535),
  /**
   * Under load, how long an append to the USSD sessions journal waits for more steps to carry (one fsync on every
   * server for all of them): adds up to this to a step's latency when steps arrive faster than appends complete.
   * 0: no wait.
   */
  CLUSTER_JOURNAL_LINGER_MS: integer(5, 0, 100),
  /** Prefix of every subject, bucket and stream, so two deployments can share one NATS. */
  NATS_PREFIX: v.optional(
    v.pipe(v.string(), v.trim(), v.regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 letters, digits, _ or -')),
    'sar',
  ),
};

/** The subset of the configuration cluster mode reads. */
export interface ClusterEnv {
  NATS_URL: string[];
  NODE_ID?: string;
  NATS_REPLICAS?: number;
  NATS_CREDS?: string;
  NATS_TOKEN?: string;
  NATS_PREFIX: string;
  NATS_MONITOR_URL?: string[];
  NATS_ALLOW_UNSYNCED_ACKS?: boolean;
  NATS_START_TIMEOUT_SECONDS?: number;
  CLUSTER_LINK?: boolean;
  CLUSTER_LINK_HOST?: string;
  CLUSTER_LINK_PORT?: number;
  CLUSTER_JOURNAL_LINGER_MS?: number;
  HOST?: string;
  PORT: number;
  PIN_ENCRYPTION_KEY?: string;
  ORACLE_PRIVATE_KEY?: string;
}

export function clusterModeOn(config: Pick<ClusterEnv, 'NATS_URL'>): boolean {
  return config.NATS_URL.length > 0;
}

/**
 * Rules across variables, checked after each one is valid. Every node must agree on the PIN key and the oracle key
 * (a PIN sealed on one node is opened on another; a UCAN addressed to the oracle is checked by any node), so cluster
 * mode cannot fall back to a key generated into one node's DATA_DIR.
 */
export function clusterConfigProblems(config: ClusterEnv): string[] {
  if (!clusterModeOn(config)) return [];
  const problems: string[] = [];
  for (const name of ['PIN_ENCRYPTION_KEY', 'ORACLE_PRIVATE_KEY'] as const) {
    if (!config[name])
      problems.push(`${name}="": is required when NATS_URL is set (every node of a cluster must use the same key)`);
  }
  if (config.NATS_CREDS && config.NATS_TOKEN) problems.push('NATS_CREDS and NATS_TOKEN: set one of them, not both');
  return problems;
}

/**
 * NODE_ID, or hostname:PORT. The id is needed before the node listens (it joins the leases first), so with PORT=0
 * (an ephemeral port, known only later) it is hostname:pid<pid>.
 */
export function nodeIdOf(config: Pick<ClusterEnv, 'NODE_ID'>, port: number): string {
  return config.NODE_ID ?? `${hostname()}:${port === 0 ? `pid${process.pid}` : port}`;
}
