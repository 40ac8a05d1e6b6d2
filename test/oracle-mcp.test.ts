// MCP tools end to end: real MCP servers (SDK McpServer over Streamable HTTP on loopback) configured in
// MCP_SERVERS, the oracle's chat actor listing and calling them, and a protected server checking every
// invocation with ucanto (audience = its DID, chain back to the user, capability for the tool called).
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { mintDelegation, mintInvocation, formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { call, createSession, eventually, newUser, openStream, readSse, type User } from './helpers/oracle.js';
import { startTestServer } from './helpers/server.js';
import { closedPort, startMcpServer, type TestMcpServer } from './helpers/mcp-server.js';
import { chunk, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';

const oracleKey = await generateKey();
const oracleDid = oracleKey.did();
const resource = (server: string, tool: string): `${string}:${string}` =>
  `ixo:oracle:${oracleDid}:mcp/${server}/${tool}`;

let plain = await startMcpServer({ name: 'plain' });
const secure = await startMcpServer({ name: 'secure', oracleDid });
const downPort = await closedPort();
t.teardown(() => Promise.all([plain.close(), secure.close()]));

const mcpServers = [
  { name: 'plain', url: plain.url },
  { name: 'secure', url: secure.url, did: secure.did, protected: true },
  { name: 'down', url: `http://127.0.0.1:${downPort}/mcp`, protected: false },
];
const server = await startTestServer(t, {
  env: { ORACLE_PRIVATE_KEY: formatKey(oracleKey), MCP_SERVERS: JSON.stringify(mcpServers) },
});

/** Sends a message (JSON answer) and returns the answer's text. */
async function ask(
  user: User,
  sessionId: string,
  message: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await call(server, 'POST', `/messages/${sessionId}`, { user, body: { message, ...extra } });
  if (res.status !== 200) throw new Error(`answer ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.message.content;
}

async function storeDelegation(user: User, ttlSeconds: number): Promise<number> {
  const raw = await mintDelegation({ issuer: user.key, audience: oracleDid, ttlSeconds });
  const res = await call(server, 'POST', '/delegation', { user, body: { raw } });
  if (res.status !== 200) throw new Error(`delegation refused: ${JSON.stringify(res.body)}`);
  return res.body.expiration;
}

const lastCheck = (mcp: TestMcpServer) => mcp.checks.at(-1)!;

t.test(
  'an unprotected tool: offered as <server>__<tool>, called without credentials, tool_call frames in the stream',
  async (t) => {
    const ada = await newUser(oracleDid);
    const id = await createSession(server, ada);
    const items = await readSse(await openStream(server, ada, id, { message: 'use plain__echo {"text":"hello MCP"}' }));
    const calls = items.filter((item) => item.event === 'tool_call');
    t.equal(calls.length, 2);
    t.match(calls[0].data, {
      toolName: 'toolCall',
      args: { text: 'hello MCP', toolName: 'plain__echo' },
      status: 'isRunning',
    });
    t.match(calls[1].data, {
      toolName: 'toolCall',
      args: { toolName: 'plain__echo' },
      status: 'done',
      output: 'echo: hello MCP',
      eventId: calls[0].data.eventId,
    });
    t.notOk('error' in calls[1].data);
    const text = items
      .filter((item) => item.event === 'message')
      .map((item) => item.data.content)
      .join('');
    t.equal(text, 'plain__echo returned: echo: hello MCP');
    t.same(items.at(-1)!.event, 'done');

    const seen = plain.calls.at(-1)!;
    t.same(seen.args, { text: 'hello MCP' }, 'the server got the arguments');
    t.equal(seen.authorization, undefined, 'no credentials go to an unprotected server');

    const transcript = await call(server, 'GET', `/messages/${id}`, { user: ada });
    t.match(transcript.body.messages[1].toolCalls, [
      { name: 'plain__echo', args: { text: 'hello MCP' }, output: 'echo: hello MCP', status: 'done' },
    ]);
  },
);

t.test(
  "a server that is down: its tools are not offered, the other servers' are, the answer still comes",
  async (t) => {
    const ada = await newUser(oracleDid);
    const id = await createSession(server, ada);
    const answer = await ask(ada, id, 'use down__echo {}');
    t.equal(
      answer,
      'I have no tool named down__echo. Tools I can use: set_user_preferences, plain__echo, plain__whoami, plain__fail, secure__echo, secure__whoami, secure__fail.',
    );
  },
);

t.test('a tool that reports an error: the call fails with its text', async (t) => {
  const ada = await newUser(oracleDid);
  const id = await createSession(server, ada);
  t.equal(
    await ask(ada, id, 'use plain__fail {}'),
    'plain__fail failed: The MCP tool fail of plain failed: the ledger is closed',
  );
});

t.test("a protected tool with the client's own invocation (mcpInvocations)", async (t) => {
  const ada = await newUser(oracleDid);
  const id = await createSession(server, ada);
  const invocation = await mintInvocation({
    issuer: ada.key,
    audience: secure.did,
    capability: { can: 'mcp/call', with: resource('secure', 'whoami') },
    ttlSeconds: 120,
  });
  const answer = await ask(ada, id, 'use secure__whoami {}', { mcpInvocations: { secure__whoami: invocation } });
  t.equal(
    answer,
    `secure__whoami returned: user ${ada.did} via ${ada.did}`,
    "no delegation is stored: the client's invocation was used",
  );
  t.match(lastCheck(secure), { tool: 'whoami', ok: true, issuer: ada.did, rootIssuer: ada.did });
  t.equal(secure.calls.at(-1)!.authorization, `Bearer ${invocation}`, 'sent as it came');
  t.equal(secure.calls.at(-1)!.authType, 'ucan');

  // One the server refuses (addressed to someone else) fails the call with the server's reason.
  const misaddressed = await mintInvocation({
    issuer: ada.key,
    audience: oracleDid,
    capability: { can: 'mcp/call', with: resource('secure', 'whoami') },
  });
  const refused = await ask(ada, id, 'use secure__whoami {}', { mcpInvocations: { secure__whoami: misaddressed } });
  t.match(refused, /^secure__whoami failed: The MCP tool whoami of secure failed: the server refused the call \(401\)/);
  t.match(lastCheck(secure), { ok: false, reason: `addressed to ${oracleDid}` });
});

t.test('a protected tool with an invocation minted from the stored delegation', async (t) => {
  const ada = await newUser(oracleDid);
  const id = await createSession(server, ada);
  const delegationExpiry = await storeDelegation(ada, 3600);

  const before = Math.floor(Date.now() / 1000);
  t.equal(await ask(ada, id, 'use secure__whoami {}'), `secure__whoami returned: user ${ada.did} via ${oracleDid}`);
  const minted = lastCheck(secure);
  t.match(minted, {
    tool: 'whoami',
    ok: true,
    issuer: oracleDid,
    rootIssuer: ada.did,
    capability: { can: 'mcp/call', with: resource('secure', 'whoami') },
  });
  t.ok(minted.expiration! <= before + 300 + 1 && minted.expiration! > before, 'a short-lived invocation');
  t.same(minted.proofExpirations, [delegationExpiry], 'its proof is the stored delegation');

  t.equal(await ask(ada, id, 'use secure__echo {"text":"signed"}'), 'secure__echo returned: echo: signed');
  const echo = lastCheck(secure);
  t.match(
    echo,
    { tool: 'echo', ok: true, capability: { with: resource('secure', 'echo') } },
    'each tool gets its own resource',
  );
  t.not(echo.nonce, minted.nonce, 'every minted invocation is unique');

  // A delegation that ends sooner than the usual lifetime bounds the invocation.
  const bob = await newUser(oracleDid);
  const bobSession = await createSession(server, bob);
  const shortExpiry = await storeDelegation(bob, 60);
  t.equal(
    await ask(bob, bobSession, 'use secure__whoami {}'),
    `secure__whoami returned: user ${bob.did} via ${oracleDid}`,
  );
  t.equal(lastCheck(secure).expiration, shortExpiry, 'expires with the delegation, not later');
});

t.test(
  'a revoked delegation: the call fails, the agent asks the user to re-authorise, the stream says so',
  async (t) => {
    const ada = await newUser(oracleDid);
    const id = await createSession(server, ada);
    await storeDelegation(ada, 3600);
    t.equal((await call(server, 'DELETE', '/delegation', { user: ada })).status, 200);
    const reached = secure.calls.length;

    const items = await readSse(await openStream(server, ada, id, { message: 'use secure__whoami {}' }));
    const end = items.filter((item) => item.event === 'tool_call').at(-1)!;
    t.match(end.data, {
      status: 'done',
      args: { toolName: 'secure__whoami' },
      error: /^Re-authorisation needed: no delegation from you is stored \(it was revoked or never given\)/,
    });
    t.match(
      end.data.output,
      /^Error: Re-authorisation needed: .*authorise this oracle \(did:key:\S+\) again: sign a new delegation to it and send it to POST \/delegation/,
    );
    const text = items
      .filter((item) => item.event === 'message')
      .map((item) => item.data.content)
      .join('');
    t.match(text, /^secure__whoami failed: Re-authorisation needed: .*Please authorise this oracle/);
    t.same(
      items.slice(-2).map((item) => item.event),
      ['reasoning', 'done'],
      'the turn itself completes',
    );
    t.equal(secure.calls.length, reached, 'nothing was sent to the server');

    // A user who never delegated gets the same answer; a new delegation makes the tool work again.
    const bob = await newUser(oracleDid);
    const bobSession = await createSession(server, bob);
    t.match(await ask(bob, bobSession, 'use secure__echo {"text":"x"}'), /Re-authorisation needed/);
    // Another lifetime: signed in the same second with the same fields it would be the revoked delegation (same CID).
    await storeDelegation(ada, 7200);
    t.equal(await ask(ada, id, 'use secure__whoami {}'), `secure__whoami returned: user ${ada.did} via ${oracleDid}`);
  },
);

t.test('a server that goes down after listing: a clear failure, then listed again once it is back', async (t) => {
  const ada = await newUser(oracleDid);
  const id = await createSession(server, ada);
  t.equal(await ask(ada, id, 'use plain__echo {"text":"one"}'), 'plain__echo returned: echo: one');
  const port = plain.port;
  await plain.close();
  t.match(
    await ask(ada, id, 'use plain__echo {"text":"two"}'),
    /^plain__echo failed: The MCP server plain is unavailable: /,
  );
  t.match(
    await ask(ada, id, 'use plain__echo {"text":"two"}'),
    /^I have no tool named plain__echo/,
    'while it is down its tools are not offered',
  );

  plain = await startMcpServer({ name: 'plain', port });
  t.equal(
    await ask(ada, id, 'use plain__echo {"text":"three"}'),
    'plain__echo returned: echo: three',
    'a new session on the restarted server',
  );
});

t.test('a model sees the MCP tools with their JSON schemas and gets their results', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const withModel = await startTestServer(t, {
    env: {
      ORACLE_PRIVATE_KEY: formatKey(oracleKey),
      MCP_SERVERS: JSON.stringify(mcpServers.slice(0, 1)),
      LLM_BASE_URL: llm.baseUrl,
    },
  });
  const ada = await newUser(oracleDid);
  const created = await call(withModel, 'POST', '/sessions', { user: ada });
  llm.script(
    sse([
      chunk({
        tool_calls: [
          {
            index: 0,
            id: 'call_m1',
            type: 'function',
            function: { name: 'plain__echo', arguments: '{"text":"from the model"}' },
          },
        ],
      }),
      chunk({}, 'tool_calls'),
    ]),
    sse([chunk({ content: 'Done.' }, 'stop')]),
  );
  const res = await call(withModel, 'POST', `/messages/${created.body.sessionId}`, {
    user: ada,
    body: { message: 'echo something' },
  });
  t.equal(res.body.message.content, 'Done.');
  const [first, second] = llm.requests;
  const echo = first.body.tools.find((tool: { function: { name: string } }) => tool.function.name === 'plain__echo');
  t.match(echo.function, {
    description: 'Repeats the text',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', description: 'What to repeat' } },
      required: ['text'],
    },
  });
  t.match(second.body.messages.at(-1), { role: 'tool', tool_call_id: 'call_m1', content: 'echo: from the model' });
});

t.test('a server that lets the listing time out is skipped for a while instead of holding every turn', async (t) => {
  // Accepts connections and reads requests, never answers. (The timeout leaves the plain server room to list its
  // tools on a loaded machine: at 300 ms it too timed out under a load average of 19.)
  const sockets = new Set<Socket>();
  let initializes = 0;
  const silent = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('data', (data) => (initializes += data.toString('utf8').split('"method":"initialize"').length - 1));
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => silent.close(() => resolve()));
  });
  const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
  const slow = await startTestServer(t, {
    env: {
      ORACLE_PRIVATE_KEY: formatKey(oracleKey),
      MCP_TIMEOUT_MS: '1500',
      MCP_SERVERS: JSON.stringify([mcpServers[0], { name: 'silent', url: silentUrl }]),
    },
  });
  const ada = await newUser(oracleDid);
  const id = (await call(slow, 'POST', '/sessions', { user: ada })).body.sessionId;
  const ask = async (message: string) =>
    (await call(slow, 'POST', `/messages/${id}`, { user: ada, body: { message } })).body.message.content;

  t.match(
    await ask('use silent__echo {}'),
    /^I have no tool named silent__echo\. Tools I can use: set_user_preferences, plain__echo/,
  );
  await eventually(() => initializes >= 1, 'the initialize request to reach the silent server');
  t.equal(await ask('use plain__echo {"text":"still here"}'), 'plain__echo returned: echo: still here');
  t.equal(initializes, 1, 'the next turn did not wait on the silent server again');
});
