// Thread: main
// The oracle face: UCAN-authenticated chat sessions, messages (JSON or SSE), delegations and the plugins'
// routes. The sessions themselves are chat actors on the actor hosts (actor/chat-actor.ts).
import type { OracleConfig } from '../app/config.js';
import type { Face, FaceContext } from '../app/face.js';
import type { HttpRequest } from '../http/types.js';
import { createOracleAuthenticator, type UcanAuthenticator } from './auth/index.js';
import { startEventChannel, type RunningEventChannel } from './events/index.js';
import { loadOracleIdentity, type OracleIdentity } from './identity/identity.js';
import { createPluginFronts, pluginAuthExcludedRoutes, pluginRoutes } from './plugins/front.js';
import { OracleRouteAuth } from './identity/route-auth.js';
import { mountRoutes } from '../http/route.js';
import { refuseInput } from './errors.js';
import { delegationRoutes } from './routes/delegation.js';
import type { OracleRouteDeps } from './routes/deps.js';
import { messageRoutes } from './routes/messages.js';
import { modelRoutes } from './routes/models.js';
import { loadModelCatalogue } from './chat/models.js';
import { RunRegistry } from './runs/registry.js';
import { takeOverInherited, takeOverWhenDead } from './runs/takeover.js';

/** How long a kept run may be quiet before its reader asks the session's actor whether it still runs. */
const RUN_PROBE_MS = 2_000;
import { runRoutes } from './routes/runs.js';
import { sessionRoutes } from './routes/sessions.js';
import { sessionReadsThrough } from './routes/session-reads.js';
import { callKeyRoutes, callRoutes, liveAgentGuard } from './calls/routes.js';
import { hostedTurns, type HostedTurns } from './chat/phone-turns.js';

export interface OracleFace extends Face {
  readonly identity: OracleIdentity;
  /** Shared with the event channel, which authenticates its handshakes the same way. */
  readonly authenticator: UcanAuthenticator;
  readonly auth: OracleRouteAuth;
  /** Runs (and finds) the chat turns another face asks for, under the DID it vouches for (phone-turns.ts). */
  readonly hostedTurns: HostedTurns;
  /** The WebSocket event channel, once the front door is attached (`sockets`). */
  readonly events: RunningEventChannel | undefined;
}

export const createOracleFace = async ({
  config,
  records,
  log,
  actors,
  cpuPool,
  cluster,
  events: clusterEvents,
  inherited,
}: FaceContext<OracleConfig>): Promise<OracleFace> => {
  const identity = await loadOracleIdentity(config, log);
  const repositories = await records.oracle();
  const { revocations } = repositories;
  const authenticator = createOracleAuthenticator(identity, {
    maxTtlSeconds: config.UCAN_AUTH_MAX_TTL_SECONDS,
    cpuPool,
    revocations,
  });
  const plugins = createPluginFronts({ config, repositories });
  const auth = new OracleRouteAuth(authenticator, [
    ...pluginAuthExcludedRoutes(plugins),
    ...config.AUTH_EXCLUDED_ROUTES,
  ]);
  const runLimits = {
    maxBytes: config.RUN_MAX_BYTES,
    retentionMs: config.RUN_RETENTION_SECONDS * 1000,
    totalBytes: config.RUNS_MAX_BYTES,
  };
  const runs = new RunRegistry(runLimits);
  // One node: a run still open was cut when the process died (its actors run on this node only), and is not run
  // again. A client re-joining it reads `done { status: "interrupted" }`. (Cluster mode: another node takes it over.)
  if (!cluster) {
    for (const open of await repositories.openRuns.all()) {
      const { runId, sessionId, userDid, requestId } = open;
      runs.interrupted({ runId, sessionId, userDid, requestId });
      await repositories.openRuns.remove(open.sessionId, open.runId);
    }
  }
  const deps: OracleRouteDeps = {
    actors,
    authenticator,
    oracle: { oracleDid: identity.did, oracleName: identity.name },
    sessions: repositories.sessions,
    reads: sessionReadsThrough(actors),
    delegations: repositories.delegations(identity.did),
    revocations,
    heartbeatMs: config.SSE_HEARTBEAT_SECONDS * 1000,
    models: loadModelCatalogue(config),
    runs,
    keptRuns: await repositories.keptRuns?.front(runLimits, {
      registry: runs,
      openRuns: repositories.openRuns,
      reading: {
        heartbeatMs: config.SSE_HEARTBEAT_SECONDS * 1000,
        probeMs: RUN_PROBE_MS,
        giveUpMs: config.SSE_HEARTBEAT_SECONDS * 2000 + 5000,
        onQuiet: takeOverWhenDead(actors),
      },
      log: log.child({ face: 'oracle' }),
    }),
    log: log.child({ face: 'oracle' }),
  };
  // Cluster mode: the partitions of a node that died are this node's now, and so are the turns it left cut: they are
  // taken over at once, with or without a client re-joining them (runs/takeover.ts).
  inherited?.onInherited((isInherited) => {
    void takeOverInherited(repositories.openRuns, actors, isInherited, deps.log).catch((error: unknown) =>
      deps.log.warn({ err: error }, 'the open runs of inherited partitions were not taken over'),
    );
  });
  let events: RunningEventChannel | undefined;
  return {
    name: 'oracle',
    identity,
    hostedTurns: hostedTurns({ ...deps, cluster: cluster !== undefined }),
    authenticator,
    auth,
    get events() {
      return events;
    },
    sockets(front) {
      events = startEventChannel(front, {
        config,
        actors,
        authenticator,
        revocations,
        sessions: deps.reads,
        log: deps.log,
        interest: clusterEvents,
      });
    },
    async stop() {
      deps.runs.stop();
      deps.keptRuns?.stop();
      await events?.stop();
    },
    routes(router) {
      const context = {
        guards: { ucan: (req: HttpRequest) => authenticator.authenticate(req.headers) },
        invalid: refuseInput,
      };
      mountRoutes(router, context, [
        ...sessionRoutes(deps),
        ...messageRoutes(deps),
        ...modelRoutes(deps.models),
        ...runRoutes(deps),
        ...delegationRoutes(deps),
        ...callRoutes({ calls: repositories.calls, reads: deps.reads }),
        ...auth.withExclusions(pluginRoutes(plugins, { oracleDid: identity.did })),
      ]);
      mountRoutes(
        router,
        { guards: { 'api-key': liveAgentGuard(config.LIVE_AGENT_AUTH_API_KEY) }, invalid: refuseInput },
        callKeyRoutes({ calls: repositories.calls, oracleDid: identity.did }),
      );
    },
  };
};
