// Thread: actor host
// Tools the client declares in a message: browser tools (`tools`) run on the user's tab, agent-UI actions
// (`agActions`) in the client's UI. Both are answered over the WebSocket event channel; the actor reaches
// it through a ClientToolBridge (bridge.ts). Without a socket on the session, calls fail with a clear
// error (NoEventChannelError) that the agent and the SSE stream report.
import type { Tool, ToolCallContext } from '../chat/agent-types.js';
import type { TurnMessage } from '../chat/chat-protocol.js';

export interface ClientToolCall {
  kind: 'browser' | 'action';
  toolName: string;
  args: Record<string, unknown>;
  context: ToolCallContext;
}

/** Delivers a client tool call to the user's tab and resolves with its result text. */
export interface ClientToolBridge {
  call(request: ClientToolCall): Promise<string>;
}

export class NoEventChannelError extends Error {
  constructor(kind: ClientToolCall['kind'], toolName: string) {
    super(
      `No event channel is connected for this session, so the ${kind === 'action' ? 'action' : 'browser tool'} ` +
        `${toolName} cannot run on the client`,
    );
    this.name = 'NoEventChannelError';
  }
}

function clientTool(
  kind: ClientToolCall['kind'],
  declared: { name: string; description: string; schema: Record<string, unknown> },
  bridge: ClientToolBridge,
): Tool {
  return {
    name: declared.name,
    description: declared.description,
    parameters: declared.schema,
    kind,
    execute: (args, context) => bridge.call({ kind, toolName: declared.name, args, context }),
  };
}

/** The turn's client tools; names a server tool already uses are dropped by the registry. */
export function clientToolsOf(turn: Pick<TurnMessage, 'tools' | 'agActions'>, bridge: ClientToolBridge): Tool[] {
  return [
    ...(turn.tools ?? []).map((tool) => clientTool('browser', tool, bridge)),
    ...(turn.agActions ?? []).map((action) => clientTool('action', action, bridge)),
  ];
}
