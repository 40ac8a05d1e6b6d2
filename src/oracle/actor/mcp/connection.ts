// Thread: actor host
// One MCP server as an actor host sees it: an `@modelcontextprotocol/sdk` client over Streamable HTTP,
// connected on first use, with the server's tool list cached. Any failure that says the connection or the
// session is gone (refused, reset, unknown session, timeout) drops both, so the next turn reconnects and
// lists again; a tools/list_changed notification drops the list alone. A server that let a listing time out
// is left alone for a while, so a host that swallows packets does not hold every turn for the whole timeout.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../../mcp-config.js';
import { McpCallError, McpUnavailableError } from './errors.js';

export type ListedTool = Pick<McpTool, 'name' | 'description' | 'inputSchema'>;

export interface CallOptions {
  /** Headers of this call only (the UCAN invocation of a protected tool). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Headers of the call being made. The SDK client has no per-request headers, and one session serves every
 * user of the host, so each tools/call runs inside its own async context and the transport's fetch adds the
 * headers found there: they go on that call's POST and on no other request.
 */
const callHeaders = new AsyncLocalStorage<Record<string, string>>();

function fetchWithCallHeaders(url: string | URL, init?: RequestInit): Promise<Response> {
  const extra = callHeaders.getStore();
  if (!extra) return fetch(url, init);
  const headers = new Headers(init?.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return fetch(url, { ...init, headers });
}

/** Whether an error means the connection or session is unusable (as opposed to a refused or failed call). */
function connectionLost(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code !== 401 && error.code !== 403;
  if (error instanceof McpError)
    return error.code === ErrorCode.ConnectionClosed || error.code === ErrorCode.RequestTimeout;
  return true; // fetch's TypeError (refused, reset) and anything unexpected
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** After a listing timed out, turns skip the server this long (a refused connection is retried at once). */
export const RETRY_AFTER_TIMEOUT_MS = 30_000;

const timedOut = (error: unknown) => error instanceof McpError && error.code === ErrorCode.RequestTimeout;

export class McpConnection {
  #client?: Promise<Client>;
  #tools?: Promise<ListedTool[]>;
  #quietUntil = 0;

  constructor(
    readonly server: McpServerConfig,
    private readonly timeoutMs: number,
  ) {}

  /** The server's tools (cached); rejects with McpUnavailableError. */
  tools(): Promise<ListedTool[]> {
    if (Date.now() < this.#quietUntil) {
      return Promise.reject(
        new McpUnavailableError(
          this.server.name,
          `it did not answer within ${this.timeoutMs} ms; it is tried again later`,
        ),
      );
    }
    this.#tools ??= this.#list().catch((error: unknown) => {
      if (timedOut(error)) this.#quietUntil = Date.now() + RETRY_AFTER_TIMEOUT_MS;
      this.reset();
      throw new McpUnavailableError(this.server.name, describe(error));
    });
    return this.#tools;
  }

  /** Calls a tool (with this call's headers); rejects with McpUnavailableError or McpCallError. */
  async call(toolName: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    let client: Client;
    try {
      client = await this.#connected();
    } catch (error) {
      throw new McpUnavailableError(this.server.name, describe(error));
    }
    try {
      const request = () =>
        client.callTool({ name: toolName, arguments: args }, undefined, {
          signal: options.signal,
          timeout: this.timeoutMs,
        });
      return (await (options.headers ? callHeaders.run(options.headers, request) : request())) as CallToolResult;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
        throw new McpCallError(
          this.server.name,
          toolName,
          `the server refused the call (${error.code}): ${error.message}`,
        );
      }
      if (connectionLost(error)) {
        this.reset();
        throw new McpUnavailableError(this.server.name, describe(error));
      }
      throw new McpCallError(this.server.name, toolName, describe(error));
    }
  }

  /** Forgets the client and the tool list; the next use connects again. */
  reset(): void {
    const client = this.#client;
    this.#client = undefined;
    this.#tools = undefined;
    void client?.then((c) => c.close()).catch(() => undefined);
  }

  close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#tools = undefined;
    return client?.then((c) => c.close()).catch(() => undefined) ?? Promise.resolve();
  }

  async #list(): Promise<ListedTool[]> {
    const client = await this.#connected();
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.timeoutMs });
      for (const { name, description, inputSchema } of page.tools) tools.push({ name, description, inputSchema });
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  #connected(): Promise<Client> {
    this.#client ??= this.#connect().catch((error: unknown) => {
      this.#client = undefined;
      throw error;
    });
    return this.#client;
  }

  async #connect(): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(this.server.url), { fetch: fetchWithCallHeaders });
    const client = new Client({ name: 'session-actor-runtime-oracle', version: '0.1.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#tools = undefined;
    });
    await client.connect(transport, { timeout: this.timeoutMs });
    return client;
  }
}
