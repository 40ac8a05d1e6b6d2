// Thread: any
// One NATS connection per node, with JetStream checked at connect time and the replica count decided.
import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { coalesceNatsWrites } from './coalesced-writes.js';
import { readOutOfReach } from './out-of-reach.js';
import { settleAnsweredRequestsQuietly } from './settled-requests.js';
import type { ClusterEnv } from './config.js';

export interface ClusterConnection {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kvm: Kvm;
  /** JetStream for creating readers (ordered consumers): its requests give up after READER_CREATE_TIMEOUT_MS. */
  readonly reader: JetStreamClient;
  /** Replicas of every bucket and stream this node creates. */
  readonly replicas: number;
  /** Prefix of every subject, bucket and stream name. */
  readonly prefix: string;
  /** Drains subscriptions and closes the connection. */
  close(): Promise<void>;
}

/**
 * How long the creation of a reader (an R1 ordered consumer) may take before it is tried again. With one of three
 * servers dead, nats-server 2.10.27 still places about a third of new R1 consumers on that server (its meta leader
 * does not mark a killed peer offline), and such a creation is never answered: measured, 60 s after the kill too.
 * Healthy, a creation takes 4-12 ms; each new one is placed anew, so a short wait and another try read on.
 */
const READER_CREATE_TIMEOUT_MS = 1_000;

export type ConnectSettings = Pick<
  ClusterEnv,
  'NATS_URL' | 'NATS_REPLICAS' | 'NATS_CREDS' | 'NATS_TOKEN' | 'NATS_PREFIX'
>;

/**
 * NATS_REPLICAS, or 3 capped by the servers the cluster gossips to its clients (`connect_urls` lists every
 * server's client address, this one included). A lone server (no cluster) can only hold R1 streams.
 */
export function replicasFor(
  settings: Pick<ClusterEnv, 'NATS_REPLICAS'>,
  info: { cluster?: string; connect_urls?: string[] } | undefined,
): number {
  if (settings.NATS_REPLICAS !== undefined) return settings.NATS_REPLICAS;
  if (!info?.cluster) return 1;
  return Math.max(1, Math.min(3, info.connect_urls?.length ?? 1));
}

/**
 * Connects to any of the URLs (the client fails over between them, for ever: a node without NATS is unhealthy, not
 * dead) and checks that JetStream answers. Throws with a readable message when neither holds at start-up.
 */
export async function connectCluster(
  settings: ConnectSettings,
  name: string,
  options: { apiTimeoutMs?: number; probeTimeoutMs?: number } = {},
): Promise<ClusterConnection> {
  // How long a JetStream call (a write's acknowledgement, a read) waits; one that timed out may still have landed.
  const timeout = options.apiTimeoutMs ?? 5_000;
  coalesceNatsWrites();
  settleAnsweredRequestsQuietly();
  // The client's timeouts and lost connections read as `cluster_unreachable` on this thread (out-of-reach.ts).
  readOutOfReach();
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: settings.NATS_URL,
      name,
      token: settings.NATS_TOKEN,
      authenticator: settings.NATS_CREDS ? credsAuthenticator(readFileSync(settings.NATS_CREDS)) : undefined,
      maxReconnectAttempts: -1,
      // A killed server is noticed at once (its socket closes); the next one is tried after this pause.
      reconnectTimeWait: 250,
      // A server that vanishes without closing its sockets (a partition) is noticed within 2 x 5 s.
      pingInterval: 5_000,
      maxPingOut: 2,
      // Otherwise every request and JetStream publish builds an Error up front (its stack, for a timeout's
      // message): 4% of a front door's CPU per routed USSD step, measured. Timeouts still say what timed out.
      noAsyncTraces: true,
    });
  } catch (error) {
    throw new Error(`cannot connect to NATS at ${settings.NATS_URL.join(',')}: ${(error as Error).message}`);
  }
  try {
    // The check may wait less than a call: without a meta leader it is never answered (see connectClusterWhenReady).
    await (
      await jetstreamManager(nc, { timeout: options.probeTimeoutMs ?? timeout, checkAPI: false })
    ).getAccountInfo();
    const jsm = await jetstreamManager(nc, { timeout, checkAPI: false });
    const js = jetstream(nc, { timeout });
    return {
      nc,
      js,
      jsm,
      kvm: new Kvm(js),
      reader: jetstream(nc, { timeout: READER_CREATE_TIMEOUT_MS }),
      replicas: replicasFor(settings, nc.info),
      prefix: settings.NATS_PREFIX,
      close: () => nc.drain(),
    };
  } catch (error) {
    await nc.close();
    throw new Error(`NATS at ${settings.NATS_URL.join(',')} has no usable JetStream: ${(error as Error).message}`);
  }
}

/**
 * How long the start-up check waits for JetStream to answer. Without a meta leader (a quorum of servers down, or
 * electing) a request is never answered: each check would wait out the call timeout (5 s) and a node would see the
 * quorum back up to that much late. A JetStream slower than this counts as unavailable in /health as well.
 */
export const JETSTREAM_PROBE_MS = 2_000;

/**
 * connectCluster until it works: NATS not reachable yet, JetStream not answering (no meta leader while a server is
 * down or being elected), or one of this deployment's streams without a leader yet (its calls would time out) is
 * waited out, `onWait` told each time why: attempts start 250 ms apart, the gap doubling to `maxDelayMs` (2 s; a
 * check that timed out spent its gap waiting). A node started before NATS, or during NATS maintenance, thus starts
 * within about 2 s of a quorum being there instead of exiting.
 */
export async function connectClusterWhenReady(
  settings: ConnectSettings,
  name: string,
  options: {
    apiTimeoutMs?: number;
    maxDelayMs?: number;
    giveUpAfterMs?: number;
    onWait(reason: string, retryInMs: number, attempt: number): void;
  },
): Promise<ClusterConnection> {
  const giveUpAt = options.giveUpAfterMs ? Date.now() + options.giveUpAfterMs : Infinity;
  let connection: ClusterConnection | undefined;
  for (let attempt = 1, delay = 250; ; attempt++, delay = Math.min(options.maxDelayMs ?? 2_000, delay * 2)) {
    const startedAt = Date.now();
    let reason: string;
    try {
      connection ??= await connectCluster(settings, name, { probeTimeoutMs: JETSTREAM_PROBE_MS, ...options });
      const leaderless = await streamsWithoutLeader(connection);
      if (leaderless.length === 0) return connection;
      reason = `JetStream streams without a leader yet: ${leaderless.join(', ')}`;
    } catch (error) {
      reason = (error as Error).message;
    }
    if (Date.now() + delay > giveUpAt) {
      await connection?.nc.close();
      throw new Error(`gave up waiting for NATS JetStream after ${options.giveUpAfterMs} ms: ${reason}`);
    }
    const pause = Math.max(0, delay - (Date.now() - startedAt));
    options.onWait(reason, pause, attempt);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** This deployment's replicated streams (named after its prefix) that have no leader now. */
async function streamsWithoutLeader(connection: ClusterConnection): Promise<string[]> {
  const leaderless: string[] = [];
  for await (const stream of connection.jsm.streams.list()) {
    const name = stream.config.name;
    if (!name.includes(connection.prefix)) continue;
    if (stream.cluster && !stream.cluster.leader) leaderless.push(name);
  }
  return leaderless;
}
