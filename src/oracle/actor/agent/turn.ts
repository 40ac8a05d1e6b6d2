// Thread: actor host
// Builds the agent of one turn: plugins' before-agent hooks (preferences load, credits charge), the system
// prompt with the user's preferences, and the tools (plugin tools first, then the client's).
import { pluginTools, runBeforeAgent, type OraclePlugin } from '../../plugins/index.js';
import { buildSystemPrompt } from './system-prompt.js';
import { ToolRegistry } from './tool-registry.js';
import type { ChatMessage, Tool, TurnContext } from '../../chat/agent-types.js';
import type { ModelAttachment } from '../../chat/attachments.js';

export interface PrepareTurnInput {
  plugins: readonly OraclePlugin[];
  /** Filled by the hooks (context.preferences). */
  context: TurnContext;
  oracleName: string;
  /** Earlier messages of the session, oldest first, without a system message. */
  history: readonly ChatMessage[];
  userMessage: string;
  /** The user's attachments (with media URLs where known), given to the model with the message. */
  attachments?: ModelAttachment[];
  /** Browser tools, agent-UI actions and MCP tools of this turn; a name a plugin already uses is dropped. */
  clientTools?: readonly Tool[];
}

export interface PreparedTurn {
  messages: ChatMessage[];
  tools: ToolRegistry;
  systemPrompt: string;
}

/** Throws what a before-agent hook throws (PaymentRequiredError, `credits_exhausted`): call it before the stream opens. */
export async function prepareTurn(input: PrepareTurnInput): Promise<PreparedTurn> {
  await runBeforeAgent(input.plugins, input.context);
  const systemPrompt = buildSystemPrompt({
    oracleName: input.oracleName,
    preferences: input.context.preferences,
    timezone: input.context.timezone,
  });
  const tools = new ToolRegistry([...pluginTools(input.plugins, input.context), ...(input.clientTools ?? [])]);
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt },
    ...input.history.filter((message) => message.role !== 'system'),
    input.attachments?.length
      ? { role: 'user', content: input.userMessage, attachments: input.attachments }
      : { role: 'user', content: input.userMessage },
  ];
  return { messages, tools, systemPrompt };
}
