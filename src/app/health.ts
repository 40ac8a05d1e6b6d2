// Thread: main
// GET / and GET /health: one record each, carrying the fields of both specs (USSD and oracle).
import * as v from 'valibot';
import type { Config } from './config.js';
import { ClusterHealthSchema, type ClusterNode } from '../cluster/node.js';
import { declarer, mountRoutes, plainContext } from '../http/route.js';
import type { Router } from '../http/router.js';
import type { HttpEngine } from '../http/front-door.js';
import { reply } from '../http/types.js';
import { InFlight } from '../base/in-flight.js';
import type { Store } from '../store/env.js';
import type { StorageWatch } from '../store/writable.js';
import { within } from '../base/within.js';

/** A probe that takes longer than this (a stuck disk, a closed environment) counts as a failure. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * A real LMDB write and read: `database` is never a constant. Probes at the same moment (a load balancer and an
 * orchestrator) share one: each writing the same key would read back another's value and report a healthy
 * database down.
 */
async function databaseIsReachable(store: Store): Promise<boolean> {
  // Below the free-space floor the write guard refuses the probe's write: not reachable for writes.
  if (store.closed || !store.space.roomy) return false;
  const probe = (async () => {
    const db = store.db<number>('health');
    const value = Date.now();
    await db.put('probe', value);
    return db.get('probe') === value;
  })();
  return within(probe, PROBE_TIMEOUT_MS, () => new Error('probe timed out')).catch(() => false);
}

const Environment = v.pipe(v.string(), v.examples(['production']));
const Timestamp = v.pipe(v.string(), v.isoTimestamp(), v.examples(['2025-01-01T12:00:00.000Z']));
const LandingSchema = v.object({
  status: v.literal('ok'),
  message: v.string(),
  environment: Environment,
  timestamp: Timestamp,
});
const HealthSchema = v.object({
  status: v.picklist(['ok', 'error']),
  environment: Environment,
  timestamp: Timestamp,
  uptime: v.pipe(v.number(), v.description('Seconds since the process started'), v.examples([3600.5])),
  pid: v.pipe(
    v.number(),
    v.description('Process id of this server: tells it from another process answering on the same port'),
    v.examples([4242]),
  ),
  database: v.pipe(
    v.picklist(['connected', 'disconnected']),
    v.description(
      'LMDB answered a write and a read and DATA_DIR takes writes (see storage); in cluster mode JetStream answered too',
    ),
  ),
  storage: v.pipe(
    v.object({
      writable: v.boolean(),
      freeBytes: v.pipe(v.number(), v.description("Bytes free on DATA_DIR's filesystem")),
      minFreeBytes: v.pipe(v.number(), v.description('DATA_DIR_MIN_FREE_BYTES: below it, writes are refused')),
      reason: v.optional(
        v.pipe(
          v.string(),
          v.description(
            'Why not writable: `low_space` (free space below the floor) or `write_failed: <code>` (a probe write needing new space failed, e.g. ENOSPC)',
          ),
          v.examples(['low_space', 'write_failed: ENOSPC']),
        ),
      ),
    }),
    v.description(
      'Whether DATA_DIR takes writes: its free space against DATA_DIR_MIN_FREE_BYTES, and a real write needing new space (at most every 5 s)',
    ),
  ),
  httpEngine: v.pipe(
    v.object({
      name: v.picklist(['uws', 'node']),
      build: v.optional(v.picklist(['official', 'trufflesuite'])),
      version: v.string(),
    }),
    v.description(
      'The front door engine serving (HTTP_ENGINE): uWebSockets.js (its native build and version) or node:http (the Node.js version)',
    ),
  ),
  ussd: v.optional(
    v.pipe(
      v.object({
        services: v.array(
          v.object({
            id: v.string(),
            version: v.string(),
            name: v.string(),
            codes: v.array(v.object({ code: v.string(), start: v.optional(v.string()) })),
          }),
        ),
      }),
      v.description("The USSD services new dials get, each at its version (in cluster mode, the cluster's)"),
    ),
  ),
  cluster: v.optional(
    v.pipe(ClusterHealthSchema, v.description('Cluster mode only (NATS_URL set): NATS, JetStream and this node')),
  ),
  gateway: v.optional(
    v.pipe(
      v.object({
        upstream: v.object({
          target: v.string(),
          tls: v.boolean(),
          state: v.picklist(['idle', 'connecting', 'ready', 'failing']),
          address: v.optional(v.string()),
          error: v.optional(
            v.pipe(
              v.string(),
              v.description(
                'The last connection failure, e.g. "TLS handshake failed: DEPTH_ZERO_SELF_SIGNED_CERT: ..."',
              ),
            ),
          ),
          keepaliveMs: v.number(),
        }),
      }),
      v.description(
        "The protocol gateway's chain node connection (does not change status: the node is not this service)",
      ),
    ),
  ),
});

const route = declarer<void>();

export function registerHealthRoutes(
  router: Router,
  config: Config,
  { store, storage }: { store: Store; storage: StorageWatch },
  httpEngine: HttpEngine,
  cluster?: ClusterNode,
  faceFields: () => Record<string, unknown> = () => ({}),
): void {
  const environment = config.NODE_ENV;
  const probes = new InFlight<boolean>();
  const clusterProbes = new InFlight<Awaited<ReturnType<ClusterNode['health']>>>();
  mountRoutes(router, plainContext<void>(), [
    route({
      method: 'GET',
      path: '/',
      auth: 'public',
      summary: 'Landing and liveness record',
      tags: ['health'],
      responses: { 200: { description: 'The service is running', schema: LandingSchema } },
      handler: () =>
        reply.json(200, {
          status: 'ok',
          message: 'Session actor runtime is running',
          environment,
          timestamp: new Date().toISOString(),
        }),
    }),
    route({
      method: 'GET',
      path: '/health',
      auth: 'public',
      summary: 'Health with a real database read and write',
      tags: ['health'],
      responses: {
        200: {
          description: 'LMDB answered a write and a read (in cluster mode JetStream answered too)',
          schema: HealthSchema,
        },
        503: {
          description:
            'LMDB did not answer or DATA_DIR takes no writes (database "disconnected", storage says why), or in cluster mode NATS or JetStream did not',
          schema: HealthSchema,
        },
      },
      async handler() {
        const [connected, writes, clusterHealth] = await Promise.all([
          probes.run('database', () => databaseIsReachable(store)),
          storage.check(),
          cluster && clusterProbes.run('cluster', () => cluster.health()),
        ]);
        // In cluster mode the records live in JetStream too: the database is up when both answer.
        const database =
          connected && writes.writable && (clusterHealth ? clusterHealth.report.jetstream === 'available' : true);
        const ok = database && (clusterHealth?.healthy ?? true);
        return reply.json(ok ? 200 : 503, {
          status: ok ? 'ok' : 'error',
          environment,
          timestamp: new Date().toISOString(),
          uptime: process.uptime(),
          pid: process.pid,
          database: database ? 'connected' : 'disconnected',
          storage: writes,
          httpEngine,
          ...(clusterHealth ? { cluster: clusterHealth.report } : {}),
          ...faceFields(),
        });
      },
    }),
  ]);
}
