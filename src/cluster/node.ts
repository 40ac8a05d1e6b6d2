// Thread: main
// What cluster mode adds to the server: connect to NATS JetStream at start-up (or refuse to start),
// join the partition leases once the actor hosts run and route actors through NatsActorRouter, report the
// connection, JetStream and the partitions in /health, leave the leases and close on shutdown.
import * as v from 'valibot';
import type { Logger } from '../base/log.js';
import type { ActorRuntime } from '../runtime/actor-runtime.js';
import { actorsOver, type Actors } from '../runtime/router.js';
import { nodeIdOf, type ClusterEnv } from './config.js';
import { natsConnected, partitionsOwned } from '../metrics/catalogue.js';
import { checkAckDurability, UnsyncedAcksError } from './ack-durability.js';
import { connectClusterWhenReady, JETSTREAM_PROBE_MS, type ClusterConnection } from './connection.js';
import { ClusterEventBus } from './event-bus.js';
import { NatsActorRouter, notServedHere, type ActorRequest } from './nats-router.js';
import { NodeLinks } from './node-link/peers.js';
import type { LinkServer } from './node-link/server.js';
import { startLinkServer } from './node-link/start.js';
import { PartitionLeases, partitionOf } from './partition-leases.js';

/** The longest a shutdown waits for the partitions to be handed back. */
const LEAVE_WAIT_MS = 2_000;

export const ClusterHealthSchema = v.object({
  nodeId: v.pipe(v.string(), v.examples(['node-1:3000'])),
  nats: v.pipe(v.picklist(['connected', 'reconnecting', 'closed']), v.description('The NATS connection of this node')),
  server: v.optional(v.pipe(v.string(), v.description('The NATS server this node is connected to'))),
  jetstream: v.pipe(
    v.picklist(['available', 'unavailable']),
    v.description('JetStream answered an account-info request'),
  ),
  replicas: v.pipe(v.number(), v.description('Replicas of every bucket and stream this node creates')),
  state: v.pipe(
    v.literal('cluster'),
    v.description('Actors are routed between nodes by partition; every record (USSD and oracle) lives in JetStream'),
  ),
  partitions: v.pipe(
    v.object({ owned: v.number(), total: v.number() }),
    v.description('Partitions whose actors this node runs now, of all partitions'),
  ),
  liveNodes: v.pipe(
    v.array(v.string()),
    v.description('Nodes whose lease this node sees alive (itself included), sorted'),
  ),
  link: v.optional(
    v.pipe(
      v.string(),
      v.examples(['10.0.0.5:41234']),
      v.description("host:port of this node's node link, where other nodes send the calls for its partitions"),
    ),
  ),
});

export type ClusterHealth = v.InferOutput<typeof ClusterHealthSchema>;

/** The actors a node took on because their partition's owner died (its lease lapsed): work left to resume. */
export interface InheritedActors {
  /** Calls `listener` each time this node takes partitions of a dead node, with a test of the actor ids in them. */
  onInherited(listener: (inherited: (actorId: string) => boolean) => void): void;
  /**
   * Calls `listener` each time this node takes partitions however it got them (free, handed over cleanly by a node
   * joining or stopping, or inherited), with a test of the actor ids in them; at once for those it owns already.
   */
  onClaimed(listener: (claimed: (actorId: string) => boolean) => void): void;
}

export interface ClusterNode {
  readonly connection: ClusterConnection;
  readonly nodeId: string;
  /**
   * Joins the partition leases and answers the faces' Actors: calls go to the node owning the actor's partition
   * (this runtime when it is this node); events are this node's actors' and, for the sessions this node has sockets
   * for, every node's (`events`, the cluster event bus, which the event channel tells whom it follows).
   */
  route(runtime: ActorRuntime): Promise<{ actors: Actors; events: ClusterEventBus; inherited: InheritedActors }>;
  /** The cluster part of /health; healthy when NATS is connected and JetStream answers. */
  health(): Promise<{ healthy: boolean; report: ClusterHealth }>;
  /** Stops answering for partitions and gives them back (the others take them at once); before the runtime stops. */
  leave(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects (waiting, with backoff, for NATS and JetStream: `onWait` hears why), then checks that the servers fsync
 * before acknowledging: refuses (UnsyncedAcksError) when one does not, unless NATS_ALLOW_UNSYNCED_ACKS; warns when
 * it cannot tell.
 */
export async function startClusterNode(
  config: ClusterEnv,
  log: Logger,
  onWait?: (reason: string) => void,
): Promise<ClusterNode> {
  const nodeId = nodeIdOf(config, config.PORT);
  const connection = await connectClusterWhenReady(config, `sar ${nodeId}`, {
    giveUpAfterMs: (config.NATS_START_TIMEOUT_SECONDS ?? 0) * 1000,
    onWait(reason, retryInMs, attempt) {
      log.warn({ attempt, retryInMs }, `cluster mode: waiting for NATS JetStream: ${reason}`);
      onWait?.(reason);
    },
  });
  await refuseUnsyncedAcks(config, connection, log);
  let state: ClusterHealth['nats'] = 'connected';
  const connected = natsConnected.with();
  connected.value = 1;
  void (async () => {
    for await (const status of connection.nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') state = 'reconnecting';
      else if (status.type === 'reconnect') state = 'connected';
      connected.value = state === 'connected' ? 1 : 0;
      if (status.type === 'disconnect' || status.type === 'reconnect')
        log.warn({ nats: status.type, server: status.server }, `NATS ${status.type}`);
    }
  })();
  void connection.nc.closed().then(() => {
    state = 'closed';
    connected.value = 0;
  });
  log.info(
    { nodeId, server: connection.nc.info?.server_name, replicas: connection.replicas, prefix: connection.prefix },
    'cluster mode: connected to NATS JetStream',
  );

  let leases: PartitionLeases | undefined;
  let router: NatsActorRouter | undefined;
  let events: ClusterEventBus | undefined;
  let linkServer: LinkServer | undefined;
  let links: NodeLinks | undefined;
  const jetstreamAnswers = () =>
    Promise.race([
      connection.jsm.getAccountInfo().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => setTimeout(resolve, JETSTREAM_PROBE_MS, false).unref()),
    ]);

  return {
    connection,
    nodeId,
    async route(runtime) {
      if (config.CLUSTER_LINK !== false) {
        linkServer = await startLinkServer(config, connection.nc, {
          // The router exists before any call can arrive: the link is advertised only by the leases' heartbeat.
          answer: (request) => router?.answer(request as ActorRequest) ?? Promise.resolve(notServedHere(nodeId)),
          onRefused: (reason, remote) => log.warn({ remote, reason }, 'node link: connection refused'),
        });
        links = new NodeLinks();
        log.info({ host: linkServer.address.host, port: linkServer.address.port }, 'node link listening');
      }
      leases = await PartitionLeases.join(connection, { nodeId, link: linkServer?.address });
      router = new NatsActorRouter({ connection, leases, local: runtime, links });
      events = new ClusterEventBus(connection, runtime);
      const owned = partitionsOwned.with();
      owned.value = leases.owned.size;
      leases.on('change', (mine) => {
        owned.value = mine.size;
        log.debug({ owned: mine.size }, 'partitions owned');
      });
      log.info({ nodeId, partitions: leases.partitions, liveNodes: leases.liveNodes() }, 'joined the partition leases');
      const joined = leases;
      const inherited: InheritedActors = {
        onInherited: (listener) =>
          joined.on('inherited', (partitions) =>
            listener((actorId) => partitions.has(partitionOf(actorId, joined.partitions))),
          ),
        onClaimed: (listener) => {
          joined.on('claimed', (partitions) =>
            listener((actorId) => partitions.has(partitionOf(actorId, joined.partitions))),
          );
          // Those claimed before the listener came (a face made after the node joined) are told at once.
          const owned = new Set(joined.owned);
          if (owned.size > 0) listener((actorId) => owned.has(partitionOf(actorId, joined.partitions)));
        },
      };
      return { actors: actorsOver(router, events), events, inherited };
    },
    async health() {
      const jetstream = state === 'connected' && (await jetstreamAnswers()) ? 'available' : 'unavailable';
      const server = state === 'connected' ? connection.nc.info?.server_name : undefined;
      return {
        healthy: state === 'connected' && jetstream === 'available',
        report: {
          nodeId,
          nats: state,
          ...(server ? { server } : {}),
          jetstream,
          replicas: connection.replicas,
          state: 'cluster',
          partitions: { owned: leases?.owned.size ?? 0, total: leases?.partitions ?? 0 },
          liveNodes: leases?.liveNodes() ?? [],
          ...(linkServer ? { link: `${linkServer.address.host}:${linkServer.address.port}` } : {}),
        },
      };
    },
    async leave() {
      router?.close();
      events?.close();
      if (!leases) return;
      // The hand-back is a few quorum writes; with NATS away they could only time out, so they get a bounded wait
      // (the leases stop renewing at once either way, and the others take over after a lease).
      const left = leases.leave().catch((err: unknown) => log.warn({ err }, 'leaving the partition leases failed'));
      await Promise.race([left, new Promise((resolve) => setTimeout(resolve, LEAVE_WAIT_MS).unref())]);
    },
    async close() {
      // Calls still in flight on the link get their answers first ("moved" once the leases are left).
      await linkServer?.close();
      links?.close();
      // Draining needs a server to flush to: without one, close at once.
      if (connection.nc.isClosed()) return;
      await (state === 'connected' ? connection.close() : connection.nc.close());
    },
  };
}

async function refuseUnsyncedAcks(config: ClusterEnv, connection: ClusterConnection, log: Logger): Promise<void> {
  const durability = await checkAckDurability(connection.nc.info, config.NATS_MONITOR_URL ?? []);
  const detail = { verdict: durability.verdict, reasons: durability.reasons };
  if (durability.verdict === 'synced')
    return void log.info(detail, 'cluster mode: NATS fsyncs every write before acknowledging it');
  if (durability.verdict === 'unknown') {
    return void log.warn(
      detail,
      `cluster mode: CANNOT TELL whether NATS fsyncs before acknowledging (${durability.reasons.join('; ')}); a power cut of a quorum may lose acknowledged writes unless every server runs nats-server >= 2.10.23 with sync_interval: always`,
    );
  }
  const message = `NATS acknowledges writes before they are on disk: ${durability.reasons.join('; ')}. Run nats-server >= 2.10.23 with "sync_interval: always" in its jetstream block (docs/cluster.md), or set NATS_ALLOW_UNSYNCED_ACKS=true to accept losing acknowledged writes in a power cut`;
  if (config.NATS_ALLOW_UNSYNCED_ACKS)
    return void log.error(detail, `cluster mode: NATS_ALLOW_UNSYNCED_ACKS=true, starting anyway: ${message}`);
  await connection.nc.close();
  throw new UnsyncedAcksError(message);
}
