// Messages through HTTP with the built-in agent: JSON answers, returnAllMessages, validation, SSE frames
// parsed with eventsource-parser, preferences across sessions, the abort route's place before :sessionId.
import t from 'tap';
import {
  call,
  createSession,
  newUser,
  openStream,
  readSse,
  sharedOracleServer,
  type SseItem,
} from './helpers/oracle.js';

// Every test has users and sessions of its own: one server serves them all.
const oracle = sharedOracleServer(t);

t.test('a JSON message: the answer, then the transcript', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  const res = await call(server, 'POST', `/messages/${id}`, {
    user: ada,
    body: { message: 'hello there' },
    headers: { 'x-request-id': 'm-1' },
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-request-id'), 'm-1');
  t.same(Object.keys(res.body).sort(), ['message', 'sessionId']);
  t.equal(res.body.sessionId, id);
  t.match(res.body.message, { type: 'ai', id: /^[0-9a-f-]{36}$/ });
  t.match(res.body.message.content, /You said: "hello there"/);

  const listed = await call(server, 'GET', `/messages/${id}`, { user: ada });
  t.equal(listed.status, 200);
  t.same(
    listed.body.messages.map((m: { type: string }) => m.type),
    ['human', 'ai'],
  );
  t.match(listed.body.messages[0], { type: 'human', content: 'hello there', isComplete: true, isReasoning: false });
  t.match(listed.body.messages[1], {
    id: res.body.message.id,
    content: res.body.message.content,
    toolCalls: [],
    isComplete: true,
    isReasoning: false,
  });
  // Unknown ids and other users' ids answer alike, so ids cannot be probed.
  const unknown = await call(server, 'GET', '/messages/no-such-session', { user: ada });
  const bob = await newUser(server.oracleDid);
  const foreign = await call(server, 'GET', `/messages/${id}`, { user: bob });
  t.equal(unknown.status, 404, 'unknown session: 404');
  t.same(unknown.body, { statusCode: 404, message: 'Session not found', error: 'Not Found' });
  t.same(
    { status: foreign.status, body: foreign.body },
    { status: unknown.status, body: unknown.body },
    "another user's session: the same answer",
  );
});

t.test('returnAllMessages returns the whole transcript beside the answer', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  await call(server, 'POST', `/messages/${id}`, { user: ada, body: { message: 'first' } });
  const res = await call(server, 'POST', `/messages/${id}`, {
    user: ada,
    body: { message: 'second', returnAllMessages: true },
  });
  t.equal(res.status, 200);
  t.same(
    res.body.messages.map((m: { type: string; content: string }) => [m.type, m.type === 'human' ? m.content : 'ai']),
    [
      ['human', 'first'],
      ['ai', 'ai'],
      ['human', 'second'],
      ['ai', 'ai'],
    ],
  );
  t.equal(res.body.messages[3].id, res.body.message.id);
});

t.test('SendMessageDto validation: 400 with the message array', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  const attachment = { mxcUri: 'mxc://example.org/abc', filename: 'a.png', mimetype: 'image/png' };
  const cases: [string, unknown, string[]][] = [
    ['no body', undefined, ['body must be a JSON object']],
    ['no message', {}, ['message is required']],
    ['empty message', { message: '' }, ['message should not be empty']],
    ['stream not a boolean', { message: 'x', stream: 'yes' }, ['stream must be a boolean']],
    [
      '11 attachments',
      { message: 'x', attachments: Array(11).fill(attachment) },
      ['attachments must contain at most 10 elements'],
    ],
    [
      'attachment without mxcUri or eventId',
      { message: 'x', attachments: [{ filename: 'a', mimetype: 'text/plain' }] },
      ['attachments.0 needs an mxcUri or an eventId'],
    ],
    [
      'attachment without filename',
      { message: 'x', attachments: [{ eventId: '$e', mimetype: 'text/plain' }] },
      ['attachments.0.filename is required'],
    ],
    [
      'bad tool name',
      { message: 'x', tools: [{ name: 'has space', description: 'd', schema: {} }] },
      ['tools.0.name must be 1-64 letters, digits, underscores or dashes'],
    ],
    [
      'tool without schema',
      { message: 'x', tools: [{ name: 'ok', description: 'd' }] },
      ['tools.0.schema is required'],
    ],
    [
      'agAction hasRender',
      { message: 'x', agActions: [{ name: 'a', description: 'd', schema: {}, hasRender: 1 }] },
      ['agActions.0.hasRender must be a boolean'],
    ],
    [
      'bad timezone',
      { message: 'x', timezone: 'Mars/Olympus' },
      ['timezone must be an IANA time zone such as Europe/Paris'],
    ],
    ['metadata not an object', { message: 'x', metadata: 'm' }, ['metadata must be an object']],
    [
      'mcpInvocations not base64',
      { message: 'x', mcpInvocations: { tool: 'not base64!' } },
      ['mcpInvocations.tool must be a base64 CAR invocation'],
    ],
    [
      'two problems',
      { message: 5, returnAllMessages: 'no' },
      ['message must be a string', 'returnAllMessages must be a boolean'],
    ],
  ];
  for (const [name, body, message] of cases) {
    const res = await call(server, 'POST', `/messages/${id}`, { user: ada, body });
    t.equal(res.status, 400, name);
    t.same(res.body, { statusCode: 400, message, error: 'Bad Request' }, name);
  }
  const malformed = await call(server, 'POST', `/messages/${id}`, {
    user: ada,
    body: '{"message":',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(malformed.status, 400);
  t.same(malformed.body.message, ['Malformed JSON body']);

  // Everything the DTO allows, at its limits, is accepted.
  const full = await call(server, 'POST', `/messages/${id}`, {
    user: ada,
    body: {
      message: 'hello',
      attachments: Array(10).fill(attachment),
      tools: [{ name: 'get_location', description: 'Where the user is', schema: { type: 'object', properties: {} } }],
      agActions: [{ name: 'show_chart', description: 'Shows a chart', schema: { type: 'object' }, hasRender: true }],
      mcpInvocations: { weather__forecast: 'QUJD' },
      timezone: 'Africa/Nairobi',
      homeServer: 'matrix.example.org',
      metadata: { editorRoomId: '!room:example.org' },
      returnAllMessages: false,
      stream: false,
    },
  });
  t.equal(full.status, 200);
  t.equal(
    (await call(server, 'GET', `/messages/${id}`, { user: ada })).body.messages.length,
    2,
    'only the valid message was recorded',
  );
});

t.test('POST /messages/abort is matched before POST /messages/:sessionId', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  const res = await call(server, 'POST', '/messages/abort', { user: ada, body: { sessionId: id } });
  t.equal(res.status, 200);
  t.same(res.body, { success: false }, 'nothing in flight');
  const bad = await call(server, 'POST', '/messages/abort', { user: ada, body: { message: 'I am not an abort body' } });
  t.equal(bad.status, 400);
  t.same(bad.body.message, ['sessionId is required'], 'the abort schema answered, not the send route');
});

function frameNames(items: SseItem[]): string[] {
  return items.map((item) => item.event);
}

t.test('SSE: reasoning ack first, message deltas, tool_call frames for "call me Ada", done last', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  const res = await openStream(server, ada, id, { message: 'call me Ada' });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'text/event-stream');
  t.equal(res.headers.get('cache-control'), 'no-cache, no-transform');
  t.equal(res.headers.get('x-accel-buffering'), 'no');
  t.ok(res.headers.get('x-request-id'), 'the SDK refuses a stream without X-Request-Id');
  const requestId = res.headers.get('x-request-id');
  const items = await readSse(res);
  const names = frameNames(items);

  t.equal(names[0], 'reasoning');
  t.match(items[0].data, {
    sessionId: id,
    requestId,
    reasoning: 'Thinking...',
    reasoningDetails: [{ type: 'thinking', text: 'Thinking...' }],
    isComplete: false,
  });
  t.equal(names.at(-1), 'done');
  t.same(items.at(-1)!.data, { status: 'finished' });
  t.equal(names.at(-2), 'reasoning');
  t.match(items.at(-2)!.data, { reasoning: '', isComplete: true });

  const tools = items.filter((item) => item.event === 'tool_call');
  t.equal(tools.length, 2);
  t.match(tools[0].data, {
    requestId,
    sessionId: id,
    toolName: 'toolCall',
    args: { userName: 'Ada', toolName: 'set_user_preferences' },
    status: 'isRunning',
  });
  t.match(tools[1].data, { toolName: 'toolCall', status: 'done', eventId: tools[0].data.eventId, output: /Saved/ });
  const text = items
    .filter((item) => item.event === 'message')
    .map((item) => item.data.content)
    .join('');
  t.match(text, /call you Ada/);
  t.ok(items.filter((item) => item.event === 'message').length > 1, 'the text arrives as several deltas');
  t.ok(
    items.every((item) => item.raw.indexOf('\n') === -1),
    'every data line is one line of JSON',
  );

  // The transcript was committed before the stream ended.
  const listed = await call(server, 'GET', `/messages/${id}`, { user: ada });
  t.match(listed.body.messages[1], {
    type: 'ai',
    content: text,
    toolCalls: [{ name: 'set_user_preferences', args: { userName: 'Ada' }, status: 'done' }],
  });
  t.match((await call(server, 'GET', '/user-preferences', { user: ada })).body, { userName: 'Ada', updatedAt: /Z$/ });
});

t.test('preferences saved in one session are seen in the first turn of the next', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const bob = await newUser(server.oracleDid);
  t.equal((await call(server, 'GET', '/user-preferences', { user: ada })).body, null, 'none yet: JSON null');
  const first = await createSession(server, ada);
  await readSse(await openStream(server, ada, first, { message: 'call me Ada and be more formal' }));
  await call(server, 'POST', `/messages/${first}`, { user: ada, body: { message: 'call yourself Sage' } });

  const second = await createSession(server, ada);
  const res = await call(server, 'POST', `/messages/${second}`, { user: ada, body: { message: 'hello' } });
  t.match(
    res.body.message.content,
    /^Good day, Ada\. I am Sage\./,
    'the first turn already uses the saved preferences',
  );
  t.match((await call(server, 'GET', '/user-preferences', { user: ada })).body, {
    userName: 'Ada',
    agentName: 'Sage',
    formality: 'formal',
  });

  // Preferences are per user.
  const bobs = await createSession(server, bob);
  const bobReply = await call(server, 'POST', `/messages/${bobs}`, { user: bob, body: { message: 'hello' } });
  t.match(bobReply.body.message.content, /^Hello! I'm the built-in assistant/);
  t.equal((await call(server, 'GET', '/user-preferences', { user: bob })).body, null);
});

t.test('a browser tool or action without an event channel fails clearly in the stream', async (t) => {
  const server = await oracle();
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);
  const items = await readSse(
    await openStream(server, ada, id, {
      message: 'use show_chart {"kind":"bar"}',
      agActions: [{ name: 'show_chart', description: 'Shows a chart', schema: { type: 'object' } }],
    }),
  );
  const actions = items.filter((item) => item.event === 'action_call');
  t.match(actions[0].data, { toolName: 'show_chart', status: 'isRunning' });
  t.match(actions[1].data, { toolName: 'show_chart', status: 'error', error: /No event channel is connected/ });
  t.equal(frameNames(items).at(-1), 'done');
});
