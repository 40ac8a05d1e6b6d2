// Thread: actor host
// The MCP tools of a turn. Each configured server's tools are offered as `<server>__<tool>` with their JSON
// schemas; a server that cannot be reached is left out of that turn (and tried again on the next one).
// Calls to a protected server carry a UCAN invocation: the client's own (`mcpInvocations[<offered name>]`
// of the message) when it sent one, otherwise one the oracle mints from the user's stored delegation.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../../base/log.js';
import type { Tool, ToolCallContext } from '../../chat/agent-types.js';
import type { UcanMinter } from '../ucan-minting.js';
import type { McpServerConfig } from '../../mcp-config.js';
import { McpConnection, type ListedTool } from './connection.js';
import { McpCallError } from './errors.js';

/** The ability a minted invocation carries (the resource names the oracle, the server and the tool). */
export const MCP_CALL_ABILITY = 'mcp/call';

/** `ixo:oracle:<oracle DID>:mcp/<server>/<tool>`: what a protected server checks the invocation against. */
export function mcpResource(oracleDid: string, serverName: string, toolName: string): `ixo:oracle:${string}` {
  return `ixo:oracle:${oracleDid}:mcp/${serverName}/${toolName}`;
}

/** OpenAI's rule for function names; MCP allows more (dots, slashes), which are replaced by `_`. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function offeredName(serverName: string, toolName: string): string | undefined {
  const name = `${serverName}__${toolName.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return FUNCTION_NAME.test(name) ? name : undefined;
}

/** The result as the model reads it: the text parts, with other parts named. */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'resource':
        return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
      case 'resource_link':
        return `[resource ${part.uri}]`;
      default:
        return `[${part.type}${'mimeType' in part ? ` ${part.mimeType}` : ''}]`;
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

export interface McpTurn {
  /** Invocations the client minted itself, by offered tool name. */
  mcpInvocations?: Readonly<Record<string, string>>;
}

export interface McpToolbox {
  readonly servers: readonly McpServerConfig[];
  /** The tools of every reachable server, for one turn. */
  toolsFor(turn: McpTurn): Promise<Tool[]>;
  close(): Promise<void>;
}

export interface McpToolboxOptions {
  servers: readonly McpServerConfig[];
  timeoutMs: number;
  minter: UcanMinter;
  log: Pick<Logger, 'warn'>;
}

export function createMcpToolbox(options: McpToolboxOptions): McpToolbox {
  const connections = options.servers.map((server) => new McpConnection(server, options.timeoutMs));

  async function authorization(
    server: McpServerConfig,
    tool: ListedTool,
    offered: string,
    turn: McpTurn,
    context: ToolCallContext,
  ) {
    const invocation =
      turn.mcpInvocations?.[offered] ??
      (await options.minter.mintForUser({
        userDid: context.userDid,
        audience: server.did!,
        capability: { can: MCP_CALL_ABILITY, with: mcpResource(context.oracleDid, server.name, tool.name) },
      }));
    return { Authorization: `Bearer ${invocation}`, 'X-Auth-Type': 'ucan' };
  }

  function toolOf(connection: McpConnection, tool: ListedTool, offered: string, turn: McpTurn): Tool {
    const { server } = connection;
    return {
      name: offered,
      description: tool.description ?? `${tool.name} (MCP server ${server.name})`,
      parameters: tool.inputSchema,
      kind: 'mcp',
      async execute(args, context) {
        const headers = server.protected ? await authorization(server, tool, offered, turn, context) : undefined;
        const result = await connection.call(tool.name, args, { headers, signal: context.signal });
        const text = resultText(result);
        if (result.isError) throw new McpCallError(server.name, tool.name, text || 'the tool reported an error');
        return text;
      },
    };
  }

  async function toolsOf(connection: McpConnection, turn: McpTurn): Promise<Tool[]> {
    let listed: ListedTool[];
    try {
      listed = await connection.tools();
    } catch (error) {
      options.log.warn(
        { err: error, mcpServer: connection.server.name },
        'MCP server unavailable; its tools are not offered this turn',
      );
      return [];
    }
    const tools: Tool[] = [];
    for (const tool of listed) {
      const offered = offeredName(connection.server.name, tool.name);
      if (offered) tools.push(toolOf(connection, tool, offered, turn));
      else options.log.warn({ mcpServer: connection.server.name, tool: tool.name }, 'MCP tool name too long to offer');
    }
    return tools;
  }

  return {
    servers: options.servers,
    async toolsFor(turn) {
      if (connections.length === 0) return [];
      return (await Promise.all(connections.map((connection) => toolsOf(connection, turn)))).flat();
    },
    async close() {
      await Promise.all(connections.map((connection) => connection.close()));
    },
  };
}
