// Thread: any
// The settings the runtime itself reads. The whole configuration rides along to each actor host
// (workerData) without the runtime reading the rest: the host thread's composition root (workers/actor-host.ts)
// hands it to the actor kinds, whose HostContext is completed by src/app/actor-kinds.ts.
export interface RuntimeConfig {
  /** Calls a host may hold queued before it refuses new ones (ActorBusyError). */
  readonly ACTOR_HOST_QUEUE_LIMIT: number;
  readonly SHUTDOWN_TIMEOUT_MS: number;
  /** Whether hosts get a port to post their metrics on. */
  readonly METRICS_ENABLED: boolean;
}
