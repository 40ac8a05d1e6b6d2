// Browser tools and agent-UI actions over the event channel during a streaming reply: the built-in agent
// calls a declared tool when the message says `use <tool> {json}`; the client answers over its socket;
// the SSE stream shows the call and its outcome. Answers count once, only from a socket of the same
// session and user; a call without an answer fails at BROWSER_TOOL_TIMEOUT_MS, one without any socket at once.
import t from 'tap';
import { closeAll, invocationOf, NativeClient, SocketIoClient } from './helpers/events.js';
import {
  call,
  createSession,
  newUser,
  openStream,
  readSse,
  startOracleServer,
  type SseItem,
} from './helpers/oracle.js';

const TIMEOUT_MS = 1500;
const server = await startOracleServer(t, { env: { BROWSER_TOOL_TIMEOUT_MS: String(TIMEOUT_MS) } });
const ada = await newUser(server.oracleDid);
const bob = await newUser(server.oracleDid);

const getPage = {
  name: 'getPage',
  description: 'Reads the page the user looks at',
  schema: { type: 'object', properties: { x: { type: 'number' } } },
};
const showChart = { name: 'showChart', description: 'Shows a chart', schema: { type: 'object' }, hasRender: true };
const confirm = { name: 'confirmPayment', description: 'Asks the user to confirm', schema: { type: 'object' } };

/** Sends a streamed message and reads the whole SSE stream (in the background). */
function streamed(sessionId: string, body: Record<string, unknown>): Promise<SseItem[]> {
  return openStream(server, ada, sessionId, body).then(readSse);
}

const framesOf = (items: SseItem[], event: string) =>
  items.filter((item) => item.event === event).map((item) => item.data);

async function transcript(sessionId: string) {
  return (await call(server, 'GET', `/messages/${sessionId}`, { user: ada })).body.messages;
}

t.test('browser tool round trip on the native socket during a streaming reply', async (t) => {
  const sessionId = await createSession(server, ada);
  const ws = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(ada) });
  closeAll(t, ws);

  const reply = streamed(sessionId, { message: 'use getPage {"x":1}', tools: [getPage] });
  const request = await ws.take('browser_tool_call');
  t.match(request, { sessionId, requestId: String, toolCallId: /^call_/, toolName: 'getPage', args: { x: 1 } });
  const running = await ws.take('tool_call');
  t.match(running, {
    toolName: 'toolCall',
    args: { toolName: 'getPage', x: 1 },
    status: 'isRunning',
    eventId: request.toolCallId,
  });

  ws.send('tool_result', { toolCallId: request.toolCallId, result: { title: 'Home', words: 12 } });
  const items = await reply;
  const [start, end] = framesOf(items, 'tool_call');
  t.match(
    start,
    { status: 'isRunning', eventId: request.toolCallId, args: { toolName: 'getPage', x: 1 } },
    'the SSE stream shows the call',
  );
  t.match(
    end,
    { status: 'done', eventId: request.toolCallId, output: '{"title":"Home","words":12}' },
    'and its outcome',
  );
  t.notOk(end.error, 'no error');
  const text = framesOf(items, 'message')
    .map((m) => m.content)
    .join('');
  t.equal(text, 'getPage returned: {"title":"Home","words":12}', 'the agent used the result');
  t.equal(items.at(-1)!.event, 'done');
  t.match(
    await ws.take('tool_call'),
    { status: 'done', output: '{"title":"Home","words":12}' },
    'the channel shows the outcome too',
  );
  t.match(await ws.take('message_cache_invalidation'), { sessionId });

  const [, ai] = await transcript(sessionId);
  t.match(
    ai.toolCalls,
    [
      {
        name: 'getPage',
        args: { x: 1 },
        id: request.toolCallId,
        output: '{"title":"Home","words":12}',
        status: 'done',
      },
    ],
    'stored',
  );

  // The same result again: the call is over, so it is ignored and the socket is told.
  ws.send('tool_result', { toolCallId: request.toolCallId, result: 'again' });
  t.match(await ws.take('error'), { event: 'tool_result', message: /^No browser tool call call_.* is waiting/ });
});

t.test('action round trip over Socket.IO; an action declared with hasRender ends with render_component', async (t) => {
  const sessionId = await createSession(server, ada);
  const sio = await SocketIoClient.connect(server.url, { sessionId }, { invocation: invocationOf(ada) });
  closeAll(t, sio);

  const reply = streamed(sessionId, { message: 'use showChart {"series":[1,2,3]}', agActions: [showChart] });
  const request = await sio.take('action_call');
  t.match(request, {
    sessionId,
    requestId: String,
    toolCallId: String,
    toolName: 'showChart',
    args: { series: [1, 2, 3] },
    status: 'isRunning',
  });
  // The SDK answers as in its tool executor: { toolCallId, sessionId, result }.
  sio.send('action_call_result', { toolCallId: request.toolCallId, sessionId, result: { rendered: true } });
  const items = await reply;

  const frames = framesOf(items, 'action_call');
  t.match(
    frames,
    [
      { toolCallId: request.toolCallId, toolName: 'showChart', status: 'isRunning' },
      { toolCallId: request.toolCallId, toolName: 'showChart', status: 'done', output: '{"rendered":true}' },
    ],
    'the SSE stream shows the action and its outcome',
  );
  t.equal(framesOf(items, 'tool_call').length, 0, 'an action is not a tool_call');
  const render = await sio.take('render_component');
  t.match(render, {
    sessionId,
    toolCallId: request.toolCallId,
    componentName: 'showChart',
    args: { series: [1, 2, 3] },
    status: 'done',
    output: '{"rendered":true}',
  });
  t.equal(
    sio.inbox.names().filter((name) => name === 'action_call').length,
    1,
    'one action_call over the channel: the SDK runs its handler on each',
  );
});

t.test(
  "an action the client reports as failed, and a browser tool that throws, fail with the client's error",
  async (t) => {
    const sessionId = await createSession(server, ada);
    const ws = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(ada) });
    closeAll(t, ws);

    const action = streamed(sessionId, { message: 'use confirmPayment {"amount":5}', agActions: [confirm] });
    const request = await ws.take('action_call');
    ws.send('action_call_result', {
      toolCallId: request.toolCallId,
      sessionId,
      result: { success: false, error: 'user declined' },
      error: 'user declined',
    });
    const [, end] = framesOf(await action, 'action_call');
    t.match(end, { status: 'error', error: 'The action confirmPayment failed on the client: user declined' });
    await ws.take('message_cache_invalidation');
    t.notOk(ws.inbox.names().includes('render_component'), 'no render for an action without hasRender');

    const tool = streamed(sessionId, { message: 'use getPage {}', tools: [getPage] });
    const call = await ws.take('browser_tool_call');
    ws.send('tool_result', { toolCallId: call.toolCallId, result: null, error: 'Tool getPage not found' });
    const items = await tool;
    const [, done] = framesOf(items, 'tool_call');
    t.match(done, { status: 'done', error: 'The browser tool getPage failed on the client: Tool getPage not found' });
    t.match(
      framesOf(items, 'message')
        .map((m) => m.content)
        .join(''),
      /^getPage failed: /,
    );
  },
);

t.test('a browser tool without an answer fails after BROWSER_TOOL_TIMEOUT_MS with a clear error', async (t) => {
  const sessionId = await createSession(server, ada);
  const ws = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(ada) });
  closeAll(t, ws);

  const items = await streamed(sessionId, { message: 'use getPage {"x":2}', tools: [getPage] });
  const request = await ws.take('browser_tool_call');
  const [, end] = framesOf(items, 'tool_call');
  t.match(end, {
    status: 'done',
    eventId: request.toolCallId,
    error: `The browser tool getPage got no result from the client within ${TIMEOUT_MS} ms`,
  });
  t.match(
    framesOf(items, 'message')
      .map((m) => m.content)
      .join(''),
    /^getPage failed: The browser tool getPage got no result/,
  );
  t.equal(items.at(-1)!.event, 'done', 'the reply still completes');

  ws.send('tool_result', { toolCallId: request.toolCallId, result: 'too late' });
  t.match(
    await ws.take('error'),
    { event: 'tool_result', message: /is waiting for a result/ },
    'a late answer is ignored',
  );
});

t.test('with no socket on the session a client tool fails at once', async (t) => {
  const sessionId = await createSession(server, ada);
  const items = await streamed(sessionId, { message: 'use getPage {}', tools: [getPage] });
  const [, end] = framesOf(items, 'tool_call');
  t.match(end, { status: 'done', error: /^No event channel is connected for this session/ });
  const actions = await streamed(sessionId, { message: 'use showChart {}', agActions: [showChart] });
  t.match(framesOf(actions, 'action_call')[1], {
    status: 'error',
    error: /^No event channel is connected for this session, so the action showChart/,
  });
});

t.test(
  'answers from a socket of another session or another user are ignored; the first right one counts, once',
  async (t) => {
    const sessionId = await createSession(server, ada);
    const adaOther = await createSession(server, ada);
    const bobSession = await createSession(server, bob);
    const right = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(ada) });
    const rightToo = await SocketIoClient.connect(server.url, { sessionId }, { invocation: invocationOf(ada) });
    const otherSession = await NativeClient.connect(server.url, { sessionId: adaOther, invocation: invocationOf(ada) });
    const otherUser = await SocketIoClient.connect(
      server.url,
      { sessionId: bobSession },
      { invocation: invocationOf(bob) },
    );
    closeAll(t, right, rightToo, otherSession, otherUser);

    const reply = streamed(sessionId, { message: 'use getPage {"x":3}', tools: [getPage] });
    const request = await right.take('browser_tool_call');
    t.match(
      await rightToo.take('browser_tool_call'),
      { toolCallId: request.toolCallId },
      'every socket of the session hears the call',
    );
    const { toolCallId } = request;

    // Another session of the same user: its own session has no such call; naming Ada's first session is refused.
    otherSession.send('tool_result', { toolCallId, result: 'from the wrong tab' });
    t.match(await otherSession.take('error'), { event: 'tool_result', message: /is waiting for a result/ });
    otherSession.send('tool_result', { toolCallId, sessionId, result: 'from the wrong tab' });
    t.match(await otherSession.take('error'), {
      event: 'tool_result',
      message: `This socket does not follow session ${sessionId}`,
    });
    // Another user, even naming the session and the call id.
    otherUser.send('tool_result', { toolCallId, sessionId, result: 'from Bob' });
    t.match(await otherUser.take('error'), { message: `This socket does not follow session ${sessionId}` });
    otherUser.send('subscribe', { sessionId });
    t.match(
      await otherUser.take('error'),
      { event: 'subscribe', message: 'Session not found' },
      'nor can Bob follow it',
    );
    // An answer of the wrong kind for this call id.
    right.send('action_call_result', { toolCallId, sessionId, result: 'an action answer' });
    t.match(await right.take('error'), { event: 'action_call_result', message: /^No action call/ });

    rightToo.send('tool_result', { toolCallId, result: 'the right answer' });
    const items = await reply;
    t.match(
      framesOf(items, 'tool_call')[1],
      { status: 'done', output: 'the right answer' },
      'the first answer from the session counts',
    );
    right.send('tool_result', { toolCallId, result: 'a second answer' });
    t.match(
      await right.take('error'),
      { event: 'tool_result', message: /is waiting for a result/ },
      'the duplicate is ignored',
    );
    const [, ai] = await transcript(sessionId);
    t.equal(ai.toolCalls[0].output, 'the right answer');
  },
);

t.test('aborting the reply ends the wait for a client tool', async (t) => {
  const sessionId = await createSession(server, ada);
  const ws = await NativeClient.connect(server.url, { sessionId, invocation: invocationOf(ada) });
  closeAll(t, ws);
  const reply = streamed(sessionId, { message: 'use getPage {}', tools: [getPage] });
  const request = await ws.take('browser_tool_call');
  const abort = await call(server, 'POST', '/messages/abort', { user: ada, body: { sessionId } });
  t.same(abort.body, { success: true });
  const items = await reply;
  t.equal(items.at(-1)!.event, 'done');
  ws.send('tool_result', { toolCallId: request.toolCallId, result: 'after the abort' });
  t.match(await ws.take('error'), { message: /is waiting for a result/ }, 'the call no longer waits');
});
