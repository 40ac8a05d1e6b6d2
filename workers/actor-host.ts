// Thread: actor host
// Worker entry of an actor host: opens LMDB (and in cluster mode its own NATS connection),
// hosts the actors of its shard, answers the main thread's calls (rpc.ts) on its call port.
import { workerData } from 'node:worker_threads';
import { actorKinds } from '../src/app/actor-kinds.js';
import { clusterModeOn, nodeIdOf } from '../src/cluster/config.js';
import { connectCluster } from '../src/cluster/connection.js';
import { createLogger } from '../src/base/log.js';
import { reportHostMetrics } from '../src/metrics/host-report.js';
import { timeStoreCommits } from '../src/metrics/store.js';
import { ActorHost, type HostContext } from '../src/runtime/actor-host.js';
import { batchingEndpoint } from '../src/runtime/batching-endpoint.js';
import { RpcClient, serve, type CallPolicy } from '../src/runtime/rpc.js';
import type { MainThreadCalls, RestQuery } from '../src/base/chain-rest.js';
import type { HostInit } from '../src/runtime/messages.js';
import type { Config } from '../src/app/config.js';
import { openRecords } from '../src/app/records.js';
import { openStore } from '../src/store/env.js';
import { startTracing, stopTracing } from '../src/telemetry/index.js';

// The main thread passes the whole configuration (HostInit types only the runtime's slice of it).
const { hostIndex, config, rpcPort, eventPort, metricsPort, mainPort } = workerData as HostInit & { config: Config };
const log = createLogger(config.LOG_LEVEL).child({ host: hostIndex });
// Tracing: this thread's own SDK, exporting to the same collector as the main thread (telemetry/index.ts).
const node = clusterModeOn(config) ? nodeIdOf(config, config.PORT) : undefined;
await startTracing(config, { thread: `actor-host-${hostIndex}`, ...(node ? { node } : {}) });
const store = openStore(config.DATA_DIR, { minFreeBytes: config.DATA_DIR_MIN_FREE_BYTES });
// A NATS connection cannot be shared between threads: each host opens its own (the main thread checked NATS already).
const cluster = clusterModeOn(config)
  ? await connectCluster(config, `sar ${config.NODE_ID ?? 'node'} host ${hostIndex}`)
  : undefined;

const context: HostContext = {
  hostIndex,
  config,
  store,
  records: openRecords(store, config, cluster),
  log,
  ...(cluster ? { cluster } : {}),
  ...(mainPort ? { chainRest: chainRestOver(new RpcClient<MainThreadCalls>(batchingEndpoint(mainPort))) } : {}),
  publish: (topic, event, data) => eventPort.postMessage({ topic, event, data }),
  send: (kind, actorId, message) => host.send(kind, actorId, message),
};
const host = new ActorHost(actorKinds, context, config.ACTOR_IDLE_SECONDS * 1000, {
  mailboxLimit: config.ACTOR_MAILBOX_LIMIT,
  // On a graceful stop the mailboxes drain first, then this thread's NATS connection and LMDB environment close.
  afterClose: async () => {
    // Every write was awaited by its actor before the mailboxes drained: nothing is left to flush, so no drain.
    await cluster?.nc.close().catch((err: unknown) => log.warn({ err }, 'closing the host NATS connection failed'));
    await store.close();
    await stopTracing();
  },
});

serve(host, batchingEndpoint(rpcPort));

/** The main thread's gateway, called over the call port; it answers by the deadline, this side waits a little more. */
function chainRestOver(main: RpcClient<MainThreadCalls>): RestQuery {
  const policy: CallPolicy = {
    graceMs: 250,
    timedOut: (timeoutMs) => new Error(`the main thread did not answer a chain query within ${timeoutMs} ms`),
    fromRemote: (error) => error,
  };
  return (path, timeoutMs) => main.call('chainRest', [path, timeoutMs], timeoutMs, policy);
}
if (metricsPort) {
  timeStoreCommits(store);
  reportHostMetrics(metricsPort, () => host.load());
}
log.debug('actor host ready');
