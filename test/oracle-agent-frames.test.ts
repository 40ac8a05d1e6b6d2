// Loop events -> SSE frames, exactly as the wire-format reference shows them, parsed back with a real SSE parser.
import t from 'tap';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { encodeSseFrame, SseFrameBuilder, type SseFrame } from '../dist/src/oracle/sse-frames.js';
import { runAgent } from '../dist/src/oracle/actor/agent/run.js';
import { builtinProvider } from '../dist/src/oracle/actor/agent/builtin-provider.js';
import type { AgentEvent, Provider, Tool, TurnContext } from '../dist/src/oracle/chat/agent-types.js';

const TS = '2025-01-02T03:04:05.000Z';
const builder = () => new SseFrameBuilder('s-1', 'r-1', () => TS);

function parseStream(text: string): EventSourceMessage[] {
  const messages: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => messages.push(message) });
  parser.feed(text);
  return messages;
}

function context(signal = new AbortController().signal): TurnContext {
  return { userDid: 'did:key:zUser', oracleDid: 'did:key:zOracle', sessionId: 's-1', requestId: 'r-1', signal };
}

/** Runs a turn and returns its whole SSE body, the way the actor will write it. */
async function streamTurn(provider: Provider, tools: Tool[], message: string, signal?: AbortSignal): Promise<string> {
  const frames = builder();
  let body = encodeSseFrame(frames.start());
  const result = await runAgent({
    provider,
    messages: [
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: message },
    ],
    tools,
    context: context(signal),
    onEvent: (event) => {
      body += encodeSseFrame(frames.frame(event));
    },
  });
  for (const frame of frames.end(result)) body += encodeSseFrame(frame);
  return body;
}

t.test('encodeSseFrame: one string, one data line, optional id, parsed back by eventsource-parser', async (t) => {
  const frame: SseFrame = { event: 'message', data: { content: 'line one\nline two', timestamp: TS } };
  const text = encodeSseFrame(frame, 7);
  t.equal(text, `id: 7\nevent: message\ndata: {"content":"line one\\nline two","timestamp":"${TS}"}\n\n`);
  t.equal(
    text.split('\n').filter((line) => line.startsWith('data:')).length,
    1,
    'a newline in the content stays escaped',
  );
  t.same(parseStream(text), [{ id: '7', event: 'message', data: JSON.stringify(frame.data) }]);
  t.equal(encodeSseFrame({ event: 'done', data: {} }), 'event: done\ndata: {}\n\n');
});

t.test('the frames of each event', async (t) => {
  const frames = builder();
  t.same(frames.start(), {
    event: 'reasoning',
    data: {
      sessionId: 's-1',
      requestId: 'r-1',
      reasoning: 'Thinking...',
      reasoningDetails: [{ type: 'thinking', text: 'Thinking...' }],
      isComplete: false,
      timestamp: TS,
    },
  });
  t.same(frames.frame({ type: 'message', delta: 'Hi' }), { event: 'message', data: { content: 'Hi', timestamp: TS } });
  t.same(frames.frame({ type: 'reasoning', delta: 'hmm' }).data.reasoningDetails, [{ type: 'thinking', text: 'hmm' }]);

  const args = { city: 'Paris' };
  t.same(
    frames.frame({
      type: 'tool_call',
      phase: 'start',
      toolCallId: 'c1',
      toolName: 'get_weather',
      args,
      status: 'isRunning',
    }),
    {
      event: 'tool_call',
      data: {
        requestId: 'r-1',
        sessionId: 's-1',
        toolName: 'toolCall',
        args: { city: 'Paris', toolName: 'get_weather' },
        status: 'isRunning',
        eventId: 'c1',
      },
    },
  );
  t.same(
    frames.frame({
      type: 'tool_call',
      phase: 'end',
      toolCallId: 'c1',
      toolName: 'get_weather',
      args,
      status: 'done',
      output: 'sunny',
    }),
    {
      event: 'tool_call',
      data: {
        requestId: 'r-1',
        sessionId: 's-1',
        toolName: 'toolCall',
        args: { city: 'Paris', toolName: 'get_weather' },
        status: 'done',
        eventId: 'c1',
        output: 'sunny',
      },
    },
  );
  const failed = frames.frame({
    type: 'tool_call',
    phase: 'end',
    toolCallId: 'c2',
    toolName: 'x',
    args: {},
    status: 'done',
    error: 'boom',
  });
  t.equal(failed.data.status, 'done', 'tool_call knows only isRunning and done');
  t.equal(failed.data.output, 'Error: boom');
  t.equal(failed.data.error, 'boom');

  t.same(
    frames.frame({
      type: 'action_call',
      phase: 'start',
      toolCallId: 'a1',
      toolName: 'showChart',
      args: { n: 1 },
      status: 'isRunning',
    }),
    {
      event: 'action_call',
      data: { requestId: 'r-1', sessionId: 's-1', toolCallId: 'a1', toolName: 'showChart', status: 'isRunning' },
    },
  );
  t.same(
    frames.frame({
      type: 'action_call',
      phase: 'end',
      toolCallId: 'a1',
      toolName: 'showChart',
      args: {},
      status: 'done',
      output: 'shown',
    }).data,
    {
      requestId: 'r-1',
      sessionId: 's-1',
      toolCallId: 'a1',
      toolName: 'showChart',
      status: 'done',
      output: 'shown',
    },
  );
  t.same(
    frames.frame({
      type: 'action_call',
      phase: 'end',
      toolCallId: 'a1',
      toolName: 'showChart',
      args: {},
      status: 'error',
      error: 'closed',
    }).data,
    {
      requestId: 'r-1',
      sessionId: 's-1',
      toolCallId: 'a1',
      toolName: 'showChart',
      status: 'error',
      error: 'closed',
    },
  );
});

t.test(
  'end: success closes reasoning then done; failure and abort end with done only, saying how and what was kept',
  async (t) => {
    t.same(builder().end({}), [
      {
        event: 'reasoning',
        data: {
          sessionId: 's-1',
          requestId: 'r-1',
          reasoning: '',
          reasoningDetails: [],
          isComplete: true,
          timestamp: TS,
        },
      },
      { event: 'done', data: { status: 'finished' } },
    ]);
    t.same(builder().end({ aborted: true, partialText: 'Half an ans' }), [
      { event: 'done', data: { status: 'aborted', aborted: true, partialText: 'Half an ans' } },
    ]);
    t.same(builder().end({ error: 'LLM down' }), [
      { event: 'error', data: { error: 'LLM down', timestamp: TS } },
      { event: 'done', data: { status: 'failed', failed: true, partialText: '' } },
    ]);
    const afterError = builder();
    afterError.frame({ type: 'error', message: 'x' } satisfies AgentEvent);
    t.same(
      afterError.end({ error: 'x', partialText: 'so far' }),
      [{ event: 'done', data: { status: 'failed', failed: true, partialText: 'so far' } }],
      'no second error frame',
    );
  },
);

t.test('a whole built-in turn: ack first, message deltas, complete reasoning, done last', async (t) => {
  const events = parseStream(await streamTurn(builtinProvider(), [], 'hello there'));
  t.equal(events[0].event, 'reasoning');
  t.equal(JSON.parse(events[0].data).reasoning, 'Thinking...');
  t.equal(events.at(-1)!.event, 'done');
  t.same(JSON.parse(events.at(-1)!.data), { status: 'finished' });
  t.equal(events.at(-2)!.event, 'reasoning');
  t.equal(JSON.parse(events.at(-2)!.data).isComplete, true);
  const messages = events.filter((e) => e.event === 'message');
  t.ok(messages.length > 3, 'several deltas');
  t.match(messages.map((m) => JSON.parse(m.data).content).join(''), /You said: "hello there"/);
});

t.test('a failing provider: ack, what was streamed, error, done', async (t) => {
  const failing: Provider = {
    name: 'failing',
    async *stream() {
      yield { type: 'text', delta: 'Par' };
      throw new Error('The LLM server answered 500 Internal Server Error');
    },
  };
  const events = parseStream(await streamTurn(failing, [], 'x'));
  t.same(
    events.map((e) => e.event),
    ['reasoning', 'message', 'error', 'done'],
  );
  t.equal(JSON.parse(events[2].data).error, 'The LLM server answered 500 Internal Server Error');
});

t.test('an aborted turn still ends with done and without an error frame', async (t) => {
  const controller = new AbortController();
  const slow: Provider = {
    name: 'slow',
    async *stream({ signal }) {
      yield { type: 'text', delta: 'one ' };
      controller.abort();
      if (signal.aborted) throw new DOMException('aborted', 'AbortError');
      yield { type: 'text', delta: 'never' };
    },
  };
  const events = parseStream(await streamTurn(slow, [], 'x', controller.signal));
  t.same(
    events.map((e) => e.event),
    ['reasoning', 'message', 'done'],
  );
});
