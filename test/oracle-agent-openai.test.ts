// The OpenAI-compatible provider against a local server speaking the chat-completions streaming protocol.
import t from 'tap';
import { once } from 'node:events';
import { openAiProvider } from '../dist/src/oracle/actor/agent/openai-provider.js';
import { createProvider } from '../dist/src/oracle/actor/agent/provider.js';
import { ProviderError } from '../dist/src/oracle/chat/agent-errors.js';
import type { ChatMessage, ProviderEvent, ToolSpec } from '../dist/src/oracle/chat/agent-types.js';
import { chunk, failWith, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';

const weatherTool: ToolSpec = {
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

async function collect(events: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

t.test('OpenAI-compatible provider', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const provider = openAiProvider({ baseUrl: `${llm.baseUrl}/`, apiKey: 'sk-test', model: 'stand-in-model' });

  t.test('streams text deltas in order and stops at [DONE]', async (t) => {
    llm.script(
      sse([
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Hel' }),
        chunk({ content: 'lo ' }),
        chunk({ content: 'there' }),
        chunk({}, 'stop'),
      ]),
    );
    const events = await collect(
      provider.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal }),
    );
    t.same(events, [
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo ' },
      { type: 'text', delta: 'there' },
      { type: 'finish', reason: 'stop' },
    ]);
    const request = llm.requests.at(-1)!;
    t.equal(request.method, 'POST');
    t.equal(request.url, '/v1/chat/completions', 'a trailing slash of the base URL is not doubled');
    t.equal(request.headers.authorization, 'Bearer sk-test');
    t.equal(request.body.model, 'stand-in-model');
    t.equal(request.body.stream, true);
    t.notOk('tools' in request.body, 'no tools key without tools');
    t.same(request.body.messages, [{ role: 'user', content: 'hi' }]);
  });

  t.test('assembles tool-call deltas split across chunks and SSE events split across writes', async (t) => {
    const first = `data: ${JSON.stringify(
      chunk({
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }),
    )}\n\n`;
    llm.script(
      sse([
        chunk({ reasoning_content: 'Need the weather.' }),
        // One SSE event cut in the middle of its JSON: the parser must join the two writes.
        first.slice(0, 25),
        first.slice(25),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
        chunk({
          tool_calls: [
            { index: 1, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '"Oslo"}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    );
    const events = await collect(
      provider.stream({
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [weatherTool],
        signal: new AbortController().signal,
      }),
    );
    t.same(events, [
      { type: 'reasoning', delta: 'Need the weather.' },
      { type: 'tool_call', call: { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { type: 'tool_call', call: { id: 'call_b', name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    t.same(llm.requests.at(-1)!.body.tools, [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather of a city', parameters: weatherTool.parameters },
      },
    ]);
  });

  t.test('sends assistant tool calls and tool results in the chat-completions shape', async (t) => {
    llm.script(sse([chunk({ content: 'Sunny.' })]));
    const messages: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather in Paris?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny, 21 C' },
    ];
    await collect(provider.stream({ messages, tools: [weatherTool], signal: new AbortController().signal }));
    t.same(llm.requests.at(-1)!.body.messages, [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 C' },
    ]);
  });

  t.test('a stream that ends without [DONE] still delivers what arrived', async (t) => {
    llm.script(sse([chunk({ content: 'partial' })], { done: false }));
    const events = await collect(
      provider.stream({ messages: [{ role: 'user', content: 'x' }], tools: [], signal: new AbortController().signal }),
    );
    t.same(events, [
      { type: 'text', delta: 'partial' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  t.test('an error status is a ProviderError with the status and an excerpt of the body', async (t) => {
    llm.script(failWith(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
    const error = await collect(
      provider.stream({ messages: [{ role: 'user', content: 'x' }], tools: [], signal: new AbortController().signal }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(error instanceof ProviderError, 'ProviderError');
    t.equal((error as ProviderError).status, 401);
    t.match((error as Error).message, /answered 401 Unauthorized: .*Incorrect API key provided/);
    t.notMatch((error as Error).message, /sk-test/, 'the key is never in the message');
  });

  t.test('an error event inside the stream is a ProviderError', async (t) => {
    llm.script(sse([chunk({ content: 'a' }), { error: { message: 'model overloaded' } }]));
    const seen: ProviderEvent[] = [];
    const error = await (async () => {
      for await (const event of provider.stream({
        messages: [{ role: 'user', content: 'x' }],
        tools: [],
        signal: new AbortController().signal,
      })) {
        seen.push(event);
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    t.same(seen, [{ type: 'text', delta: 'a' }]);
    t.match((error as Error).message, /model overloaded/);
  });

  t.test('abort mid-stream stops reading and closes the connection', async (t) => {
    let serverSawClose!: Promise<unknown>;
    llm.script((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ content: 'first' }))}\n\n`);
      serverSawClose = once(res, 'close');
      // Never ends: only the client's abort finishes this answer.
    });
    const controller = new AbortController();
    const seen: ProviderEvent[] = [];
    const error = await (async () => {
      for await (const event of provider.stream({
        messages: [{ role: 'user', content: 'x' }],
        tools: [],
        signal: controller.signal,
      })) {
        seen.push(event);
        controller.abort();
      }
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    t.same(seen, [{ type: 'text', delta: 'first' }]);
    t.equal((error as Error).name, 'AbortError');
    await serverSawClose;
    t.pass('the server saw the connection close');
  });

  t.test('an unreachable server is a clear ProviderError', async (t) => {
    const gone = await startLlmStandIn();
    const url = gone.baseUrl;
    await gone.close();
    const error = await collect(
      openAiProvider({ baseUrl: url, model: 'm' }).stream({
        messages: [{ role: 'user', content: 'x' }],
        tools: [],
        signal: new AbortController().signal,
      }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(error instanceof ProviderError);
    t.match(
      (error as Error).message,
      /Could not reach the LLM server at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/,
    );
  });

  t.test(
    'without a key no Authorization header is sent; createProvider picks this provider from LLM_BASE_URL',
    async (t) => {
      llm.script(sse([chunk({ content: 'ok' })]));
      const chosen = createProvider({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'local-model' });
      t.match(chosen.name, /openai-compatible/);
      await collect(
        chosen.stream({ messages: [{ role: 'user', content: 'x' }], tools: [], signal: new AbortController().signal }),
      );
      t.notOk('authorization' in llm.requests.at(-1)!.headers);
      t.equal(llm.requests.at(-1)!.body.model, 'local-model');
      t.equal(createProvider({ LLM_MODEL: 'x' }).name, 'built-in', 'no LLM_BASE_URL: the built-in agent');
    },
  );
});
