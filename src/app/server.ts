// Thread: main
// Composition root: store -> CPU pool -> actor runtime -> faces -> routes -> front door (uWS or node:http). In cluster mode
// (NATS_URL) the node connects to NATS first and, once its actor hosts run, joins the partition leases: the faces
// then reach actors through the cluster's router (docs/cluster.md).
import type { Config } from './config.js';
import { clusterModeOn, nodeIdOf } from '../cluster/config.js';
import { startClusterNode, type ClusterNode } from '../cluster/node.js';
import { ClusterRateLimiter } from '../cluster/rate-limit.js';
import { openWaitingRoom } from '../cluster/waiting-room.js';
import { SERVICE_UNAVAILABLE } from '../ussd/answers.js';
import { registerDocsRoutes } from '../docs/index.js';
import type { Face, FaceContext } from './face.js';
import { registerHealthRoutes } from './health.js';
import { AddressList } from '../http/client-address.js';
import { transientAnswer } from '../http/errors.js';
import { Router } from '../http/router.js';
import { createHttpServer, logEngine, type HttpServer } from '../http/server.js';
import { createOperatorGuard, OPERATOR_TOKEN_REQUIRED_BEHIND_PROXY } from '../http/operator-guard.js';
import { compileProxyTrust } from '../http/proxy-trust.js';
import { createLogger, type Logger } from '../base/log.js';
import { httpEngineInfo } from '../metrics/catalogue.js';
import { registerMetricsRoute } from '../metrics/route.js';
import { measureDisk, timeStoreCommits } from '../metrics/store.js';
import { ActorRuntime } from '../runtime/actor-runtime.js';
import { CpuPool } from '../runtime/cpu-pool.js';
import { lockDataDir } from '../store/data-dir-lock.js';
import { openStore, type Store } from '../store/env.js';
import { openRecords } from './records.js';
import { StorageWatch } from '../store/writable.js';
import { createChainClient } from './chain-client.js';
import type { MainThreadCalls } from '../base/chain-rest.js';
import { createGatewayFace, notStarted, type GatewayFace } from '../gateway/index.js';
import { createOracleFace } from '../oracle/index.js';
import { playgroundEnabled, registerPlaygroundRoutes } from '../playground/index.js';
import { createIxoDidResolver } from '../oracle/auth/ixo-resolver.js';
import { createUssdFace, type UssdFaceLinks } from '../ussd/index.js';
import { USSD_DRAIN_REFUSALS } from '../ussd/routes/dial.js';
import { checkedKeys } from './keys-at-start.js';
import { startTracing, stopTracing } from '../telemetry/index.js';

export interface RunningServer {
  readonly port: number;
  readonly config: Config;
  readonly store: Store;
  readonly runtime: ActorRuntime;
  readonly cpuPool: CpuPool;
  readonly http: HttpServer;
  readonly router: Router;
  readonly faces: readonly Face[];
  readonly log: Logger;
  /** Cluster mode (NATS_URL): this node's NATS connection and leases; undefined on a single node. */
  readonly cluster?: ClusterNode;
  /** Stops accepting, finishes what is in flight (bounded by SHUTDOWN_TIMEOUT_MS), closes LMDB. */
  shutdown(reason?: string): Promise<void>;
}

/** What probes and scrapes meet when nothing exempts them from the rate limit. */
function unexemptProbes(config: Config): string {
  return (
    'No OPERATOR_TOKEN and no RATE_LIMIT_ALLOWLIST: health probes (GET / for liveness, /health for readiness) and ' +
    `metrics scrapes count against the rate limit like any client (${config.RATE_LIMIT_MAX} requests per ` +
    `${config.RATE_LIMIT_WINDOW_SECONDS} s per address, then 429) and /metrics answers loopback callers only; set ` +
    "OPERATOR_TOKEN (probes and scrapes that send it as a bearer are exempt) or list the probers' addresses in " +
    'RATE_LIMIT_ALLOWLIST'
  );
}

export async function startServer(
  baseConfig: Config,
  log: Logger = createLogger(baseConfig.LOG_LEVEL),
): Promise<RunningServer> {
  // One process per DATA_DIR, taken before anything there is read or written (a second one exits 78 naming it).
  const lock = lockDataDir(baseConfig.DATA_DIR);
  // Tracing (OTEL_EXPORTER_OTLP_ENDPOINT): this thread's SDK; each actor host starts its own.
  const node = clusterModeOn(baseConfig) ? nodeIdOf(baseConfig, baseConfig.PORT) : undefined;
  const traced = await startTracing(baseConfig, { thread: 'main', ...(node ? { node } : {}) });
  const untrace = () => (traced ? stopTracing() : Promise.resolve());
  try {
    const server = await startOwner(baseConfig, log);
    return {
      ...server,
      shutdown: (reason) =>
        server
          .shutdown(reason)
          .finally(() => lock.release())
          .finally(untrace),
    };
  } catch (error) {
    lock.release();
    await untrace();
    throw error;
  }
}

async function startOwner(baseConfig: Config, log: Logger): Promise<RunningServer> {
  // Cluster mode connects first, waiting for NATS JetStream as long as it takes; meanwhile the port answers 503
  // (/health with the reason) so the node is seen starting, not refused. A node on NATS that acknowledges writes
  // before fsyncing them refuses to start (exit 78).
  const waiting =
    clusterModeOn(baseConfig) && baseConfig.PORT !== 0
      ? await openWaitingRoom({
          host: baseConfig.HOST,
          port: baseConfig.PORT,
          environment: baseConfig.NODE_ENV,
          plainAnswers: { '/api/ussd': SERVICE_UNAVAILABLE },
        })
      : undefined;
  let cluster: ClusterNode | undefined;
  try {
    cluster = clusterModeOn(baseConfig)
      ? await startClusterNode(baseConfig, log, (reason) => waiting?.setReason(reason))
      : undefined;
  } catch (error) {
    await waiting?.close();
    throw error;
  }
  const store = openStore(baseConfig.DATA_DIR, { minFreeBytes: baseConfig.DATA_DIR_MIN_FREE_BYTES });
  if (baseConfig.METRICS_ENABLED) {
    timeStoreCommits(store);
    measureDisk(baseConfig.DATA_DIR);
  }
  const cpuPool = new CpuPool();
  // Secrets the actor hosts need are resolved once here, so every worker uses the same key; the keys must be the
  // ones the records were written with (exit 78 otherwise).
  const keys = await checkedKeys(baseConfig, store, cpuPool, cluster?.connection, log).catch(async (error) => {
    await cpuPool.close();
    await store.close();
    await cluster?.close();
    throw error;
  });
  const config: Config = { ...baseConfig, PIN_ENCRYPTION_KEY: keys.pinKey.key.toString('hex') };

  // The actor hosts start before the faces: their calls to the gateway (the USSD `query` action) find it once made.
  let gateway: GatewayFace | undefined;
  const hostCalls: MainThreadCalls = {
    chainRest: (path, timeoutMs) => gateway?.query(path, timeoutMs) ?? Promise.resolve(notStarted()),
  };
  const runtime = new ActorRuntime({ threads: config.ACTOR_THREADS, config, log, hostCalls });
  await runtime.start();
  log.info({ hosts: runtime.hostCount }, 'actor hosts started');

  // Cluster mode: actors are placed by partition lease, calls for other nodes' partitions go over NATS.
  const routed = cluster ? await cluster.route(runtime) : undefined;
  // Once in the lease table, where the key commands look for serving nodes: the keys again (keys-at-start.ts).
  await keys.recheck().catch(async (error) => {
    await cluster?.leave();
    throw error;
  });
  const context: FaceContext = {
    config,
    store,
    records: openRecords(store, config, cluster?.connection),
    log,
    actors: routed?.actors ?? runtime,
    cpuPool,
    ...(cluster && routed ? { cluster: cluster.connection, events: routed.events, inherited: routed.inherited } : {}),
  };
  // Each face made by name, so what one gives another is wired here, typed: the faces never import each other.
  const ussdLinks: UssdFaceLinks = {};
  const ussd = await createUssdFace(context, ussdLinks);
  const oracle = await createOracleFace(context);
  // The USSD `ask` states' chat turns run on the oracle's chat actors (docs/ussd-ask.md).
  ussdLinks.agent = oracle.hostedTurns;
  gateway = createGatewayFace(context);
  /** In the order their routes are registered. */
  const faces: readonly Face[] = [ussd, oracle, gateway];
  for (const face of faces) await face.start?.();
  // did:ixo issuers resolve through the chain client, over the gateway's node (its address is known once it started).
  if (gateway.upstream)
    oracle.authenticator.setDidResolver('ixo', createIxoDidResolver(createChainClient(gateway.upstream)));

  const proxyTrust = compileProxyTrust(config);
  if (proxyTrust && !config.OPERATOR_TOKEN) log.warn(OPERATOR_TOKEN_REQUIRED_BEHIND_PROXY);
  if (config.NODE_ENV === 'production' && !config.OPERATOR_TOKEN && config.RATE_LIMIT_ALLOWLIST.length === 0)
    log.warn(unexemptProbes(config));
  // Cluster mode: one rate-limit budget per client for all nodes (counters in a JetStream KV bucket).
  const sharedLimiter = cluster
    ? await ClusterRateLimiter.open(cluster.connection, {
        max: config.RATE_LIMIT_MAX,
        windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
        allowlist: new AddressList(config.RATE_LIMIT_ALLOWLIST),
      })
    : undefined;
  const http = createHttpServer({
    engine: config.HTTP_ENGINE,
    host: config.HOST,
    port: config.PORT,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    socketLimits: { maxFramesPerSecond: config.WS_MAX_FRAMES_PER_SECOND },
    corsOrigin: config.CORS_ORIGIN,
    proxyTrust,
    drainQuietMs: config.SHUTDOWN_QUIET_MS,
    drainServeMs: config.SHUTDOWN_SERVE_MS,
    // Past the serving deadline a USSD step gets the contract's fault answer, which a gateway shows the user.
    drainRefusals: USSD_DRAIN_REFUSALS,
    streamLimits: {
      maxBufferBytes: config.SSE_MAX_BUFFER_BYTES,
      stallTimeoutMs: config.SSE_STALL_TIMEOUT_SECONDS * 1000,
    },
    metrics: config.METRICS_ENABLED,
    rateLimit: {
      max: config.RATE_LIMIT_MAX,
      windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
      allowlist: config.RATE_LIMIT_ALLOWLIST,
      exemptToken: config.OPERATOR_TOKEN,
    },
    ...(sharedLimiter ? { sharedRateLimit: (ip: string) => sharedLimiter.hit(ip) } : {}),
    // A route that met a failure that passes (errors.ts: NATS out of reach, a full disk, a busy or restarting host)
    // and no answer of its face answers 503 with its Retry-After.
    passingOutage: transientAnswer,
    log,
  });
  logEngine(http.engine, config.HTTP_ENGINE, log);
  httpEngineInfo.with(http.engine.name, http.engine.name === 'uws' ? http.engine.build : 'none').value = 1;
  const router = new Router();
  const storage = new StorageWatch(config.DATA_DIR, store.space, log);
  storage.start();
  registerHealthRoutes(router, config, { store, storage }, http.engine, cluster, () =>
    Object.assign({}, ...faces.map((face) => face.health?.() ?? {})),
  );
  for (const face of faces) face.routes(router);
  if (config.METRICS_ENABLED) {
    const operatorOnly = createOperatorGuard(config.OPERATOR_TOKEN, proxyTrust !== undefined);
    registerMetricsRoute(router, { public: config.METRICS_PUBLIC, operatorOnly });
  }
  if (playgroundEnabled(config)) registerPlaygroundRoutes(router, { oracle: oracle.identity, log });
  // Last, so the OpenAPI document sees every route.
  registerDocsRoutes(router, { faces, info: { title: 'Session actor runtime API', version: '0.1.0' } });

  for (const face of faces) face.sockets?.(http);
  http.mount(router);
  await waiting?.close();
  const port = await http.listen();
  log.info({ port, host: config.HOST, dataDir: config.DATA_DIR }, 'listening');

  let stopping: Promise<void> | undefined;
  const shutdown = (reason = 'shutdown') =>
    (stopping ??= (async () => {
      log.info({ reason, inFlight: http.inFlight }, 'draining');
      const drained = await http.drain(config.SHUTDOWN_TIMEOUT_MS);
      if (!drained) log.warn({ inFlight: http.inFlight }, 'drain timed out; closing remaining requests');
      for (const face of [...faces].reverse()) {
        await face.stop?.().catch((err: unknown) => log.error({ err, face: face.name }, 'face stop failed'));
      }
      http.close();
      // Partitions handed back before the hosts stop: the other nodes take them at once instead of after a lease.
      await cluster?.leave();
      await runtime.stop();
      await cpuPool.close();
      storage.stop();
      await store.close();
      await cluster?.close().catch((err: unknown) => log.error({ err }, 'closing the NATS connection failed'));
      log.info('stopped');
    })());

  return { port, config, store, runtime, cpuPool, http, router, faces, log, cluster, shutdown };
}
