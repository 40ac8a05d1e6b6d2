// Thread: actor host
// Why an MCP tool call failed. The messages reach the model (as the tool's result) and the client (in the
// tool_call frame's output), so they say what went wrong and never carry the invocation itself.

/** The server cannot be reached, or its session is gone. */
export class McpUnavailableError extends Error {
  constructor(
    readonly serverName: string,
    detail: string,
  ) {
    super(`The MCP server ${serverName} is unavailable: ${detail}`);
    this.name = 'McpUnavailableError';
  }
}

/** The server answered, but the call failed (refused invocation, unknown tool, tool error). */
export class McpCallError extends Error {
  constructor(
    readonly serverName: string,
    readonly toolName: string,
    detail: string,
  ) {
    super(`The MCP tool ${toolName} of ${serverName} failed: ${detail}`);
    this.name = 'McpCallError';
  }
}
