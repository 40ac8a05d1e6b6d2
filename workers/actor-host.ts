// Actor host thread. Worker entry of an actor host: opens LMDB, hosts the actors of its shard, answers the
// main thread's calls (rpc.ts) on its call port.
import { workerData } from 'node:worker_threads';
import { actorKinds } from '../src/actor-kinds.js';
import { createLogger } from '../src/log.js';
import { reportHostMetrics } from '../src/metrics/host-report.js';
import { timeStoreCommits } from '../src/metrics/store.js';
import { ActorHost } from '../src/runtime/actor-host.js';
import { batchingEndpoint } from '../src/runtime/batching-endpoint.js';
import { serve } from '../src/runtime/rpc.js';
import type { HostInit } from '../src/runtime/messages.js';
import { openStore } from '../src/store/env.js';

const { hostIndex, config, rpcPort, eventPort, metricsPort } = workerData as HostInit;
const log = createLogger(config.LOG_LEVEL).child({ host: hostIndex });
const store = openStore(config.DATA_DIR);

const host = new ActorHost(
  actorKinds,
  {
    hostIndex,
    config,
    store,
    log,
    publish: (topic, event, data) => eventPort.postMessage({ topic, event, data }),
  },
  config.ACTOR_IDLE_SECONDS * 1000,
  // On a graceful stop the mailboxes drain first, then this thread's LMDB environment closes.
  { mailboxLimit: config.ACTOR_MAILBOX_LIMIT, afterClose: () => store.close() },
);

serve(host, batchingEndpoint(rpcPort));
if (metricsPort) {
  timeStoreCommits(store.root);
  reportHostMetrics(metricsPort, () => host.load());
}
log.debug('actor host ready');
