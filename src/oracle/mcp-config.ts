// Thread: any (shared, pure: no state of its own)
// MCP_SERVERS: the MCP servers whose tools the agent is offered, as JSON or as the path of a JSON file.
// Read and validated once with the rest of the environment, so a bad list stops start-up with a message
// that names the entry and the field.
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { integer } from '../base/env-schema.js';

/** Server names become tool-name prefixes (`<server>__<tool>`): no double underscore, so the split stays clear. */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

export const McpServerSchema = v.pipe(
  v.object(
    {
      name: v.pipe(
        v.string('must be a string'),
        v.maxLength(32, 'must be at most 32 characters'),
        v.regex(SERVER_NAME, 'must be letters, digits, dashes and single underscores, starting with a letter or digit'),
      ),
      url: v.pipe(
        v.string('must be a string'),
        v.url('must be a URL'),
        // Unparsable URLs are reported by v.url (a pipe runs every check).
        v.check(
          (url) => !URL.canParse(url) || /^https?:$/.test(new URL(url).protocol),
          'must be an http(s) URL (MCP Streamable HTTP endpoint)',
        ),
      ),
      did: v.optional(
        v.pipe(v.string('must be a string'), v.regex(/^did:[a-z0-9]+:\S+$/, 'must be a DID (did:<method>:<id>)')),
      ),
      protected: v.optional(v.boolean('must be true or false'), false),
    },
    'must be an object with name, url, did? and protected',
  ),
  // A protected server checks UCAN invocations addressed to its DID: without one nothing can be minted for it.
  v.check(
    (server) => !server.protected || server.did !== undefined,
    'a protected server needs its did (the audience of the invocations)',
  ),
);

export type McpServerConfig = v.InferOutput<typeof McpServerSchema>;

export const McpServerListSchema = v.pipe(
  v.array(McpServerSchema, 'must be a JSON array of servers'),
  v.check((servers) => new Set(servers.map((s) => s.name)).size === servers.length, 'server names must be unique'),
);

/** JSON text, or the path of a file holding it; parsed and validated into the server list. */
function parseServerList(value: string): { servers?: McpServerConfig[]; problem?: string } {
  let text = value;
  if (!/^\s*[[{]/.test(value)) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (error) {
      return { problem: `neither JSON nor a readable file (${(error as Error).message})` };
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problem: `not valid JSON (${(error as Error).message})` };
  }
  const result = v.safeParse(McpServerListSchema, json);
  if (result.success) return { servers: result.output };
  return { problem: result.issues.map(issueText).join('; ') };
}

/** "server 1: url must be a URL"; valibot reports a missing key with the object's message, so it is named here. */
function issueText(issue: v.BaseIssue<unknown>): string {
  const [index, ...rest] = (v.getDotPath(issue) ?? '').split('.');
  if (!index) return issue.message;
  const field = rest.join('.');
  if (issue.type === 'object' && issue.input === undefined && field) return `server ${index}: ${field} is required`;
  return `server ${index}: ${field ? `${field} ` : ''}${issue.message}`;
}

export const mcpEnv = {
  /** `[{ "name", "url", "did"?, "protected"? }]` as JSON, or a path to a JSON file; unset = no MCP servers. */
  MCP_SERVERS: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const { servers, problem } = parseServerList(dataset.value);
        if (servers) return servers;
        addIssue({ message: `MCP server list: ${problem}` });
        return NEVER;
      }),
    ),
    '[]',
  ),
  /** Bound on one MCP request (connect, list, call), in milliseconds. */
  MCP_TIMEOUT_MS: integer(30_000, 100, 600_000),
};
