// The OpenAI-compatible provider end to end: the oracle (LLM_BASE_URL set) talks to a local HTTP server
// speaking the chat-completions streaming protocol; the client sees the model's deltas, its tool calls
// run through the real set_user_preferences path, and model errors become error frames or a 502.
import t from 'tap';
import { chunk, failWith, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';
import { call, createSession, newUser, openStream, readSse, startOracleServer } from './helpers/oracle.js';

const toolCallDelta = (id: string, name: string, args: string[]) =>
  args.map((part, i) =>
    chunk({
      tool_calls: [
        {
          index: 0,
          ...(i === 0
            ? { id, type: 'function', function: { name, arguments: part } }
            : { function: { arguments: part } }),
        },
      ],
    }),
  );

t.test('streamed text, a tool call in fragments, and the system prompt with saved preferences', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const server = await startOracleServer(t, {
    env: { LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-local', LLM_MODEL: 'stand-in-1' },
  });
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);

  llm.script(
    sse([
      chunk({ reasoning_content: 'The user wants a name.' }),
      ...toolCallDelta('call_7', 'set_user_preferences', ['{"userN', 'ame":"Ada"}']),
      chunk({}, 'tool_calls'),
    ]),
    sse([chunk({ content: 'Nice to ' }), chunk({ content: 'meet you, Ada.' }, 'stop')]),
  );
  const items = await readSse(
    await openStream(server, ada, id, { message: 'please call me Ada', timezone: 'Africa/Nairobi' }),
  );
  t.same(
    items.map((item) => item.event),
    ['reasoning', 'reasoning', 'tool_call', 'tool_call', 'message', 'message', 'reasoning', 'done'],
  );
  t.equal(items[1].data.reasoning, 'The user wants a name.');
  t.match(items[2].data, {
    toolName: 'toolCall',
    args: { userName: 'Ada', toolName: 'set_user_preferences' },
    status: 'isRunning',
    eventId: 'call_7',
  });
  t.match(items[3].data, { status: 'done', eventId: 'call_7', output: /Saved/ });
  t.same(
    items.filter((item) => item.event === 'message').map((item) => item.data.content),
    ['Nice to ', 'meet you, Ada.'],
  );

  const [first, second] = llm.requests;
  t.equal(first.headers.authorization, 'Bearer sk-local');
  t.equal(first.body.model, 'stand-in-1');
  t.equal(first.body.stream, true);
  t.ok(first.body.tools.some((tool: { function: { name: string } }) => tool.function.name === 'set_user_preferences'));
  t.match(first.body.messages[0], { role: 'system', content: /Africa\/Nairobi/ });
  t.same(first.body.messages.at(-1), { role: 'user', content: 'please call me Ada' });
  t.same(
    second.body.messages.slice(-2).map((m: { role: string }) => m.role),
    ['assistant', 'tool'],
  );
  t.match(second.body.messages.at(-1), { role: 'tool', tool_call_id: 'call_7', content: /Saved/ });

  // The next session's first model call already carries the preference in its system prompt.
  const next = await createSession(server, ada);
  llm.script(sse([chunk({ content: 'Hello Ada.' }, 'stop')]));
  const reply = await call(server, 'POST', `/messages/${next}`, { user: ada, body: { message: 'hi' } });
  t.equal(reply.body.message.content, 'Hello Ada.');
  t.match(llm.requests.at(-1)!.body.messages[0].content, /## User Preferences[\s\S]*- Call the user: Ada/);
});

t.test('model failures: an error frame then done; a JSON request answers 502', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const server = await startOracleServer(t, { env: { LLM_BASE_URL: llm.baseUrl } });
  const ada = await newUser(server.oracleDid);
  const id = await createSession(server, ada);

  llm.script(failWith(503, { error: { message: 'model overloaded' } }));
  const items = await readSse(await openStream(server, ada, id, { message: 'hello' }));
  t.same(
    items.map((item) => item.event),
    ['reasoning', 'error', 'done'],
  );
  t.match(items[1].data.error, /503.*model overloaded/);

  llm.script(sse([chunk({ content: 'Half an ans' }), { error: { message: 'connection reset upstream' } }]));
  const json = await call(server, 'POST', `/messages/${id}`, { user: ada, body: { message: 'again' } });
  t.equal(json.status, 502);
  t.match(json.body, { statusCode: 502, error: 'Bad Gateway', message: /connection reset upstream/ });

  // What the user saw of the failed answer is in the transcript, and the session goes on.
  const transcript = (await call(server, 'GET', `/messages/${id}`, { user: ada })).body.messages;
  t.same(
    transcript.map((m: { content: string }) => m.content),
    ['hello', 'again', 'Half an ans'],
  );
  llm.script(sse([chunk({ content: 'Recovered.' }, 'stop')]));
  t.equal(
    (await call(server, 'POST', `/messages/${id}`, { user: ada, body: { message: 'third' } })).body.message.content,
    'Recovered.',
  );
});
