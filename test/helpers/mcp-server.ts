// A real MCP server for tests: @modelcontextprotocol/sdk McpServer over StreamableHTTPServerTransport on a
// node:http loopback server (one transport per MCP session). A protected server checks the UCAN of every
// tools/call before the SDK sees it, with ucanto: addressed to its own DID, signatures and time bounds along
// the chain, capability `mcp/call` on `ixo:oracle:<oracle DID>:mcp/<server>/<tool>` for the tool called,
// rooted in a user (never the oracle itself). Every check is recorded for the test to inspect.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Delegation } from '@ucanto/core';
import type { Signer } from '@ucanto/interface';
import { Verifier } from '@ucanto/principal';
import { access, capability, Failure, Schema } from '@ucanto/validator';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';
import { generateKey } from '../../dist/src/oracle/auth/mint.js';

export interface InvocationCheck {
  tool: string;
  ok: boolean;
  reason?: string;
  /** The invocation's issuer (the oracle for minted ones, the user for the client's own). */
  issuer?: string;
  /** The issuer at the root of the proof chain: the user. */
  rootIssuer?: string;
  capability?: { can: string; with: string };
  expiration?: number;
  /** Expirations of the proofs along the chain. */
  proofExpirations?: number[];
  nonce?: string;
}

export interface ToolCallSeen {
  tool: string;
  args: unknown;
  authorization?: string;
  authType?: string;
}

export interface TestMcpServer {
  readonly name: string;
  readonly url: string;
  readonly did: string;
  readonly port: number;
  readonly checks: InvocationCheck[];
  readonly calls: ToolCallSeen[];
  close(): Promise<void>;
}

export interface McpServerOptions {
  name: string;
  /** Protected: tools/call needs a UCAN invocation checked against `oracleDid`. */
  oracleDid?: string;
  /** Listen on this port (to come back where a stopped server was). */
  port?: number;
  signer?: Signer;
}

// `*` on `ixo:oracle` (what users delegate to the oracle), a `...*` prefix, or the exact resource cover a call.
function covers(delegated: string, claimed: string): boolean {
  if (delegated === claimed || delegated === 'ixo:oracle' || delegated === 'ixo:*') return true;
  return delegated.endsWith('*') && claimed.startsWith(delegated.slice(0, -1));
}

/** A link of an authorization chain, down to its root. */
interface ChainLink {
  readonly proofs: readonly ChainLink[];
  readonly delegation: { readonly issuer: { did(): string } };
}

const McpCall = capability({
  can: 'mcp/call',
  // Any text, as the oracle's resources are (`ixo:oracle:<did>:mcp/...`); ucanto's type wants a URI reader.
  with: Schema.text() as unknown as ReturnType<typeof Schema.URI.match>,
  derives: (claimed, delegated) =>
    covers(delegated.with, claimed.with)
      ? { ok: {} }
      : { error: new Failure(`${claimed.with} is not covered by ${delegated.with}`) },
});

async function checkInvocation(
  header: string | undefined,
  authType: string | undefined,
  server: { signer: Signer; name: string; oracleDid: string },
  tool: string,
): Promise<InvocationCheck> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
  if (!bearer || authType?.toLowerCase() !== 'ucan')
    return { tool, ok: false, reason: 'missing Authorization: Bearer <invocation> with X-Auth-Type: ucan' };
  const extracted = await Delegation.extract(Buffer.from(bearer, 'base64'));
  if (extracted.error) return { tool, ok: false, reason: `not a UCAN archive: ${extracted.error.message}` };
  const invocation = extracted.ok;
  const seen: InvocationCheck = {
    tool,
    ok: false,
    issuer: invocation.issuer.did(),
    capability: invocation.capabilities[0] as { can: string; with: string },
    expiration: invocation.expiration,
    proofExpirations: invocation.proofs.map((proof) => ('expiration' in proof ? proof.expiration : Infinity)),
    nonce: invocation.nonce,
  };
  if (invocation.audience.did() !== server.signer.did())
    return { ...seen, reason: `addressed to ${invocation.audience.did()}` };
  const expected = `ixo:oracle:${server.oracleDid}:mcp/${server.name}/${tool}`;
  if (seen.capability?.with !== expected)
    return { ...seen, reason: `capability on ${seen.capability?.with}, expected ${expected}` };
  const result = await access(invocation as never, {
    capability: McpCall,
    authority: server.signer.verifier,
    principal: Verifier,
    // A user may start a chain on ixo:oracle resources; the oracle may only pass on what a user gave it.
    canIssue: (cap: { with: string }, issuer: string) =>
      cap.with === issuer || (issuer !== server.oracleDid && cap.with.startsWith('ixo:')),
    validateAuthorization: () => ({ ok: {} }),
  });
  if (result.error) return { ...seen, reason: result.error.message.split('\n')[0] };
  let root: ChainLink = result.ok;
  while (root.proofs.length > 0) root = root.proofs[0];
  return { ...seen, ok: true, rootIssuer: root.delegation.issuer.did() };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startMcpServer(options: McpServerOptions): Promise<TestMcpServer> {
  const signer = options.signer ?? (await generateKey());
  const checks: InvocationCheck[] = [];
  const calls: ToolCallSeen[] = [];
  const verified = new Map<string, InvocationCheck>();
  const transports = new Map<string, StreamableHTTPServerTransport>();

  function buildServer(): McpServer {
    const mcp = new McpServer({ name: `test-${options.name}`, version: '1.0.0' });
    mcp.registerTool(
      'echo',
      { description: 'Repeats the text', inputSchema: { text: z.string().describe('What to repeat') } },
      async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
    );
    mcp.registerTool('whoami', { description: 'Says who the verified caller is' }, async (extra) => {
      const check = verified.get(String(extra.requestInfo?.headers.authorization ?? ''));
      return {
        content: [{ type: 'text', text: check ? `user ${check.rootIssuer} via ${check.issuer}` : 'anonymous' }],
      };
    });
    mcp.registerTool('fail', { description: 'Always fails' }, async () => ({
      content: [{ type: 'text', text: 'the ledger is closed' }],
      isError: true,
    }));
    return mcp;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'] as string | undefined;
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const message = body as
      | { method?: string; id?: number; params?: { name?: string; arguments?: unknown } }
      | undefined;
    if (message?.method === 'tools/call') {
      const tool = String(message.params?.name);
      const authorization = req.headers.authorization;
      calls.push({
        tool,
        args: message.params?.arguments,
        authorization,
        authType: req.headers['x-auth-type'] as string | undefined,
      });
      if (options.oracleDid) {
        const check = await checkInvocation(
          authorization,
          req.headers['x-auth-type'] as string | undefined,
          { signer, name: options.name, oracleDid: options.oracleDid },
          tool,
        );
        checks.push(check);
        if (!check.ok) {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: message.id ?? null,
              error: { code: -32001, message: `Unauthorized: ${check.reason}` },
            }),
          );
          return;
        }
        verified.set(authorization!, check);
      }
    }
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId || message?.method !== 'initialize') {
        res.writeHead(sessionId ? 404 : 400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32000, message: sessionId ? 'Session not found' : 'No session' },
          }),
        );
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      created.onclose = () => created.sessionId && transports.delete(created.sessionId);
      await buildServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  }

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  let closed = false;
  return {
    name: options.name,
    url: `http://127.0.0.1:${port}/mcp`,
    did: signer.did(),
    port,
    checks,
    calls,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...transports.values()].map((transport) => transport.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A loopback port with nothing listening on it (a server that is down). */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
