// The agent loop: provider -> deltas -> tools -> provider again, with the OpenAI-compatible provider talking
// to a local chat-completions server, and with the built-in agent's "use <tool> {json}".
import t from 'tap';
import { runAgent } from '../dist/src/oracle/actor/agent/run.js';
import { openAiProvider } from '../dist/src/oracle/actor/agent/openai-provider.js';
import { builtinProvider } from '../dist/src/oracle/actor/agent/builtin-provider.js';
import { ToolRegistry } from '../dist/src/oracle/actor/agent/tool-registry.js';
import type {
  AgentEvent,
  ChatMessage,
  Provider,
  Tool,
  ToolCallContext,
  TurnContext,
} from '../dist/src/oracle/chat/agent-types.js';
import { chunk, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';

function context(signal = new AbortController().signal): TurnContext {
  return { userDid: 'did:key:zUser', oracleDid: 'did:key:zOracle', sessionId: 's-1', requestId: 'r-1', signal };
}

const input = (text: string): ChatMessage[] => [
  { role: 'system', content: 'You are a test oracle.' },
  { role: 'user', content: text },
];

function weatherTool(calls: { args: Record<string, unknown>; context: ToolCallContext }[]): Tool {
  return {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
    kind: 'server',
    async execute(args, context) {
      calls.push({ args, context });
      if (args.city === 'Atlantis') throw new Error('no such city');
      return `sunny in ${String(args.city)}`;
    },
  };
}

t.test('a tool round trip through a chat-completions server', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  llm.script(
    sse([
      chunk({ content: 'Let me check. ' }),
      chunk({
        tool_calls: [
          { index: 0, id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
    ]),
    sse([chunk({ content: 'It is ' }), chunk({ content: 'sunny.' }), chunk({}, 'stop')]),
  );
  const calls: { args: Record<string, unknown>; context: ToolCallContext }[] = [];
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider: openAiProvider({ baseUrl: llm.baseUrl, model: 'm' }),
    messages: input('Weather in Paris?'),
    tools: [weatherTool(calls)],
    context: context(),
    onEvent: async (event) => {
      events.push(event);
      await new Promise((resolve) => setImmediate(resolve)); // a slow consumer: the loop waits for it
    },
  });

  t.same(events, [
    { type: 'message', delta: 'Let me check. ' },
    {
      type: 'tool_call',
      phase: 'start',
      toolCallId: 'call_w',
      toolName: 'get_weather',
      args: { city: 'Paris' },
      status: 'isRunning',
    },
    {
      type: 'tool_call',
      phase: 'end',
      toolCallId: 'call_w',
      toolName: 'get_weather',
      args: { city: 'Paris' },
      status: 'done',
      output: 'sunny in Paris',
    },
    { type: 'message', delta: 'It is ' },
    { type: 'message', delta: 'sunny.' },
  ]);
  t.equal(calls.length, 1);
  t.same(calls[0].args, { city: 'Paris' });
  t.equal(calls[0].context.toolCallId, 'call_w');
  t.equal(calls[0].context.userDid, 'did:key:zUser');

  t.equal(result.text, 'Let me check. It is sunny.');
  t.equal(result.steps, 2);
  t.equal(result.aborted, false);
  t.equal(result.error, undefined);
  t.same(result.toolCalls, [
    {
      id: 'call_w',
      name: 'get_weather',
      kind: 'server',
      args: { city: 'Paris' },
      output: 'sunny in Paris',
      status: 'done',
    },
  ]);
  t.same(result.messages, [
    {
      role: 'assistant',
      content: 'Let me check. ',
      toolCalls: [{ id: 'call_w', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    },
    { role: 'tool', toolCallId: 'call_w', content: 'sunny in Paris' },
    { role: 'assistant', content: 'It is sunny.' },
  ]);
  // The second request carries the tool call and its result.
  const second = llm.requests[1].body.messages;
  t.same(second.slice(-2), [
    {
      role: 'assistant',
      content: 'Let me check. ',
      tool_calls: [
        { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_w', content: 'sunny in Paris' },
  ]);
});

/** A provider that plays scripted steps (each a list of tool calls or a text) and records what it was sent. */
function scripted(steps: ({ calls: { id: string; name: string; arguments: string }[] } | { text: string })[]) {
  const seen: ChatMessage[][] = [];
  const provider: Provider = {
    name: 'scripted',
    async *stream({ messages }) {
      seen.push(structuredClone(messages));
      const step = steps[Math.min(seen.length - 1, steps.length - 1)];
      if ('text' in step) yield { type: 'text', delta: step.text };
      else for (const call of step.calls) yield { type: 'tool_call', call };
      yield { type: 'finish', reason: 'stop' };
    },
  };
  return { provider, seen };
}

t.test('tool failures, unknown tools and bad arguments reach the model as errors and the loop goes on', async (t) => {
  const { provider, seen } = scripted([
    {
      calls: [
        { id: 'c1', name: 'get_weather', arguments: '{"city":"Atlantis"}' },
        { id: 'c2', name: 'no_such_tool', arguments: '{}' },
        { id: 'c3', name: 'get_weather', arguments: '{"city":' },
        { id: 'c4', name: 'get_weather', arguments: '[1]' },
      ],
    },
    { text: 'Sorry.' },
  ]);
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider,
    messages: input('x'),
    tools: [weatherTool([])],
    context: context(),
    onEvent: (e) => void events.push(e),
  });
  const ends = events.filter((e) => e.type === 'tool_call' && e.phase === 'end');
  t.same(
    ends.map((e) => (e as { error?: string }).error),
    [
      'no such city',
      'Unknown tool: no_such_tool',
      `Invalid arguments for get_weather: ${(() => {
        try {
          JSON.parse('{"city":');
        } catch (e) {
          return (e as Error).message;
        }
      })()}`,
      'Invalid arguments for get_weather: the arguments are not a JSON object',
    ],
  );
  t.same(
    seen[1].filter((m) => m.role === 'tool').map((m) => (m as { content: string }).content.slice(0, 7)),
    ['Error: ', 'Error: ', 'Error: ', 'Error: '],
    'every failed call is answered to the model with an error result',
  );
  t.same(
    result.toolCalls.map((c) => [c.id, c.kind, c.status]),
    [
      ['c1', 'server', 'error'],
      ['c2', 'unknown', 'error'],
      ['c3', 'server', 'error'],
      ['c4', 'server', 'error'],
    ],
  );
  t.equal(result.text, 'Sorry.');
  t.equal(result.error, undefined);
});

t.test("tools of kind 'action' are reported as action_call with done or error", async (t) => {
  const { provider } = scripted([
    {
      calls: [
        { id: 'a1', name: 'showChart', arguments: '{"n":3}' },
        { id: 'a2', name: 'showChart', arguments: '{"n":-1}' },
      ],
    },
    { text: 'Shown.' },
  ]);
  const action: Tool = {
    name: 'showChart',
    description: 'Shows a chart in the UI',
    parameters: { type: 'object' },
    kind: 'action',
    async execute(args) {
      if (Number(args.n) < 0) throw new Error('n must be positive');
      return `chart of ${String(args.n)}`;
    },
  };
  const events: AgentEvent[] = [];
  await runAgent({
    provider,
    messages: input('x'),
    tools: [action],
    context: context(),
    onEvent: (e) => void events.push(e),
  });
  t.same(
    events.filter((e) => e.type !== 'message'),
    [
      {
        type: 'action_call',
        phase: 'start',
        toolCallId: 'a1',
        toolName: 'showChart',
        args: { n: 3 },
        status: 'isRunning',
      },
      {
        type: 'action_call',
        phase: 'end',
        toolCallId: 'a1',
        toolName: 'showChart',
        args: { n: 3 },
        status: 'done',
        output: 'chart of 3',
      },
      {
        type: 'action_call',
        phase: 'start',
        toolCallId: 'a2',
        toolName: 'showChart',
        args: { n: -1 },
        status: 'isRunning',
      },
      {
        type: 'action_call',
        phase: 'end',
        toolCallId: 'a2',
        toolName: 'showChart',
        args: { n: -1 },
        status: 'error',
        error: 'n must be positive',
      },
    ],
  );
});

t.test('the step bound stops a model that keeps calling tools', async (t) => {
  const { provider, seen } = scripted([
    { calls: [{ id: 'again', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
  ]);
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider,
    messages: input('x'),
    tools: [weatherTool([])],
    context: context(),
    maxSteps: 3,
    onEvent: (e) => void events.push(e),
  });
  t.equal(seen.length, 3);
  t.equal(result.steps, 3);
  t.equal(result.error, 'The agent stopped after 3 steps without a final answer');
  t.same(events.at(-1), { type: 'error', message: 'The agent stopped after 3 steps without a final answer' });
});

t.test('abort while a tool runs: the turn stops, and the open call gets an error result in the history', async (t) => {
  const controller = new AbortController();
  const { provider, seen } = scripted([{ calls: [{ id: 'slow', name: 'wait', arguments: '{}' }] }, { text: 'never' }]);
  const waitTool: Tool = {
    name: 'wait',
    description: 'Waits until aborted',
    parameters: { type: 'object' },
    kind: 'browser',
    execute: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(new Error('browser tool cancelled')));
        controller.abort();
      }),
  };
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider,
    messages: input('x'),
    tools: [waitTool],
    context: context(controller.signal),
    onEvent: (e) => void events.push(e),
  });
  t.equal(result.aborted, true);
  t.equal(result.error, undefined);
  t.equal(seen.length, 1, 'no second provider call');
  t.notOk(
    events.some((e) => e.type === 'error'),
    'an abort is not an error',
  );
  t.same(
    result.messages.map((m) => m.role),
    ['assistant', 'tool'],
  );
  t.match(result.messages[1], { role: 'tool', toolCallId: 'slow', content: /^Error: / });
});

t.test('the registry keeps the first tool of a name (server tools before client tools)', async (t) => {
  const server = weatherTool([]);
  const impostor: Tool = { ...server, kind: 'browser', description: 'client copy' };
  const registry = new ToolRegistry([server, impostor]);
  t.equal(registry.size, 1);
  t.equal(registry.get('get_weather')?.kind, 'server');
  t.same(registry.specs(), [{ name: 'get_weather', description: 'Weather of a city', parameters: server.parameters }]);
});

t.test('built-in agent: "use <tool> {json}" calls an offered tool with the parsed arguments', async (t) => {
  const received: Record<string, unknown>[] = [];
  const browserTool: Tool = {
    name: 'pick_color',
    description: 'Asks the user to pick a color',
    parameters: { type: 'object', properties: { palette: { type: 'string' } } },
    kind: 'browser',
    async execute(args) {
      received.push(args);
      return 'teal';
    },
  };
  const events: AgentEvent[] = [];
  const result = await runAgent({
    provider: builtinProvider(),
    messages: input('use pick_color {"palette": "ocean", "max": 3}'),
    tools: [browserTool],
    context: context(),
    onEvent: (e) => void events.push(e),
  });
  t.same(received, [{ palette: 'ocean', max: 3 }]);
  const start = events.find((e) => e.type === 'tool_call' && e.phase === 'start');
  t.match(start, { toolName: 'pick_color', args: { palette: 'ocean', max: 3 }, status: 'isRunning' });
  t.equal(result.text, 'pick_color returned: teal');

  const noArgs = await runAgent({
    provider: builtinProvider(),
    messages: input('use pick_color'),
    tools: [browserTool],
    context: context(),
  });
  t.same(received.at(-1), {}, 'no arguments means {}');
  t.equal(noArgs.toolCalls.length, 1);

  const bad = await runAgent({
    provider: builtinProvider(),
    messages: input('use pick_color {palette: ocean}'),
    tools: [browserTool],
    context: context(),
  });
  t.equal(bad.toolCalls.length, 0, 'bad JSON: no tool call');
  t.match(bad.text, /^I can't call pick_color: its arguments are not valid JSON/);

  const array = await runAgent({
    provider: builtinProvider(),
    messages: input('use pick_color [1,2]'),
    tools: [browserTool],
    context: context(),
  });
  t.match(array.text, /its arguments are not a JSON object/);

  const missing = await runAgent({
    provider: builtinProvider(),
    messages: input('use launch_rocket {"now": true}'),
    tools: [browserTool],
    context: context(),
  });
  t.equal(missing.text, 'I have no tool named launch_rocket. Tools I can use: pick_color.');

  const failing: Tool = { ...browserTool, execute: async () => Promise.reject(new Error('tab closed')) };
  const failed = await runAgent({
    provider: builtinProvider(),
    messages: input('use pick_color'),
    tools: [failing],
    context: context(),
  });
  t.equal(failed.text, 'pick_color failed: tab closed');
});
