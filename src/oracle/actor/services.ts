// Thread: actor host
// What the chat actors of one actor host share: repositories, plugins, the model provider and the bridge to
// the client's tools. Built once per host, before it takes calls (ActorKind.prepare).
import type { Logger } from '../../base/log.js';
import { preparedPerHost, type HostContext } from '../../runtime/actor-host.js';
import { providersOf } from './agent/provider.js';
import { loadModelCatalogue } from '../chat/models.js';
import type { Provider } from '../chat/agent-types.js';
import { createPlugins, type OraclePlugin } from '../plugins/index.js';
import type { SessionStores } from '../sessions/turn-commit.js';
import type { ChatBounds } from '../sessions/bounds.js';
import { createMcpToolbox, type McpToolbox } from './mcp/toolbox.js';
import { ucanMinterFor, type UcanMinter } from './ucan-minting.js';
import { ChannelToolBridge } from './bridge.js';
import type { RunFrameStore } from '../runs/kept-runs.js';
import type { OpenRunRepository } from '../runs/open-runs.js';

/** Turns of history sent to the model (older ones stay in the transcript). */
export const HISTORY_TURNS = 50;

export interface ChatServices extends SessionStores {
  /** Streamed turns in flight, for a takeover after their node died (runs/open-runs.ts). */
  readonly openRuns: OpenRunRepository;
  readonly plugins: readonly OraclePlugin[];
  /** The provider of a catalogue model (models.ts); the default model's for `undefined`. */
  readonly provider: (modelId?: string) => Provider;
  readonly maxSteps: number;
  /** Sessions per user and bytes per transcript (CHAT_SESSIONS_PER_USER_MAX, CHAT_TRANSCRIPT_MAX_BYTES). */
  readonly bounds: ChatBounds;
  /** How browser tools and actions reach the client and wait for its answer: the event channel. */
  readonly bridge: ChannelToolBridge;
  /** Sends an event to every socket of a session (the event channel, on the main thread). */
  readonly publish: HostContext['publish'];
  /** Invocations for the user to other UCAN-protected services, from the stored delegation. */
  readonly minter: UcanMinter;
  /** The configured MCP servers' tools (clients on this host, tool lists cached). */
  readonly mcp: McpToolbox;
  /** Cluster mode: where streamed turns keep their frames, so that they outlive this node (runs/kept-runs.ts). */
  readonly keptRuns?: RunFrameStore;
  readonly log: Logger;
}

export const chatServices = preparedPerHost(async (host): Promise<ChatServices> => {
  const { config } = host;
  const log = host.log.child({ face: 'oracle' });
  const repositories = await host.records.oracle();
  const minter = ucanMinterFor({ config, delegations: repositories.delegations });
  const keptRuns = await repositories.keptRuns?.frames(
    {
      maxBytes: config.RUN_MAX_BYTES,
      retentionMs: config.RUN_RETENTION_SECONDS * 1000,
      totalBytes: config.RUNS_MAX_BYTES,
    },
    log,
  );
  return {
    sessions: repositories.sessions,
    transcripts: repositories.transcripts,
    commitTurn: repositories.commitTurn,
    openRuns: repositories.openRuns,
    plugins: createPlugins({ config, repositories }),
    provider: providersOf(config, loadModelCatalogue(config)),
    maxSteps: config.AGENT_MAX_STEPS,
    bounds: {
      sessionsPerUser: config.CHAT_SESSIONS_PER_USER_MAX,
      transcriptBytes: config.CHAT_TRANSCRIPT_MAX_BYTES,
    },
    bridge: new ChannelToolBridge(host.publish, config.BROWSER_TOOL_TIMEOUT_MS),
    publish: host.publish,
    minter,
    mcp: createMcpToolbox({ servers: config.MCP_SERVERS, timeoutMs: config.MCP_TIMEOUT_MS, minter, log }),
    keptRuns,
    log,
  };
});
