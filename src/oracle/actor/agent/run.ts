// Thread: actor host
// The agent loop: provider -> streamed deltas -> tool calls through the registry -> provider again with the
// results, until the model answers without tools or `maxSteps` provider calls were made. The turn's
// AbortSignal (context.signal) stops the provider stream and the tools; the loop then returns `aborted`.
//
// Events go to `onEvent` in order; when it returns a promise the loop waits for it (backpressure: the
// stream port may be full). Failures never throw: they are reported as an `error` event and in the result.
import {
  errorMessage,
  isAbortError,
  StepLimitError,
  throwIfAborted,
  toolErrorContent,
} from '../../chat/agent-errors.js';
import { ToolRegistry } from './tool-registry.js';
import { type Context, inSpan } from '../../../telemetry/index.js';
import type {
  AgentEvent,
  AgentResult,
  ChatMessage,
  CompletedToolCall,
  Provider,
  ProviderRequest,
  Tool,
  ToolCallRequest,
  TurnContext,
} from '../../chat/agent-types.js';

export const DEFAULT_MAX_STEPS = 8;

export interface RunAgentOptions {
  provider: Provider;
  /** The whole input: system prompt, history, and the new user message last. */
  messages: ChatMessage[];
  tools: ToolRegistry | Tool[];
  context: TurnContext;
  onEvent?: (event: AgentEvent) => void | Promise<void>;
  /** Bound on provider calls per turn (default 8). */
  maxSteps?: number;
}

/** Reports an event; a promise only when the loop must wait for it (none per delta while the stream has room). */
type Emit = (event: AgentEvent) => void | Promise<void>;

/** Streams one provider call; `partial.text` holds the text so far even if the stream fails midway. */
async function runStep(
  options: RunAgentOptions,
  conversation: ChatMessage[],
  registry: ToolRegistry,
  emit: Emit,
  partial: { text: string; reasoning: string },
  trace: Context | undefined,
): Promise<ToolCallRequest[]> {
  const calls: ToolCallRequest[] = [];
  const request: ProviderRequest = { messages: conversation, tools: registry.specs(), signal: options.context.signal };
  if (trace) request.trace = trace;
  const stream = options.provider.stream(request);
  for await (const event of stream) {
    if (event.type === 'text') {
      partial.text += event.delta;
      const waiting = emit({ type: 'message', delta: event.delta });
      if (waiting) await waiting;
    } else if (event.type === 'reasoning') {
      partial.reasoning += event.delta;
      const waiting = emit({ type: 'reasoning', delta: event.delta });
      if (waiting) await waiting;
    } else if (event.type === 'tool_call') {
      calls.push(event.call);
    }
  }
  return calls;
}

function parseArguments(text: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text.trim() === '' ? '{}' : text);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError('the arguments are not a JSON object');
  return value as Record<string, unknown>;
}

/** Runs one tool call and reports it (tool_call or action_call); never throws except on abort. */
async function executeCall(
  call: ToolCallRequest,
  registry: ToolRegistry,
  context: TurnContext,
  emit: Emit,
): Promise<CompletedToolCall> {
  const tool = registry.get(call.name);
  const type = tool?.kind === 'action' ? 'action_call' : 'tool_call';
  let args: Record<string, unknown> = {};
  let failure: string | undefined;
  try {
    args = parseArguments(call.arguments);
  } catch (error) {
    failure = `Invalid arguments for ${call.name}: ${errorMessage(error)}`;
  }
  if (!tool) failure = `Unknown tool: ${call.name}`;
  const base = { toolCallId: call.id, toolName: call.name, args };
  await emit({ type, phase: 'start', ...base, status: 'isRunning' });

  let output = '';
  if (tool && failure === undefined) {
    try {
      output = await tool.execute(args, { ...context, toolCallId: call.id });
    } catch (error) {
      if (context.signal.aborted) throw error;
      failure = errorMessage(error);
    }
  }
  throwIfAborted(context.signal);
  if (failure === undefined) {
    await emit({ type, phase: 'end', ...base, status: 'done', output });
    return { id: call.id, name: call.name, kind: tool!.kind, args, output, status: 'done' };
  }
  if (type === 'action_call') await emit({ type, phase: 'end', ...base, status: 'error', error: failure });
  else await emit({ type, phase: 'end', ...base, status: 'done', error: failure });
  return { id: call.id, name: call.name, kind: tool?.kind ?? 'unknown', args, output: failure, status: 'error' };
}

/** A call the turn stopped in (abort, failure): kept with its arguments, its output says why it has no result. */
function interruptedCall(call: ToolCallRequest, registry: ToolRegistry, why: string): CompletedToolCall {
  let args: Record<string, unknown> = {};
  try {
    args = parseArguments(call.arguments);
  } catch {
    // Invalid arguments fail before the call runs, so a running call's parse; kept empty otherwise.
  }
  const kind = registry.get(call.name)?.kind ?? 'unknown';
  return {
    id: call.id,
    name: call.name,
    kind,
    args,
    output: `Interrupted: ${why}`,
    status: 'error',
    interrupted: true,
  };
}

export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  const { context } = options;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const registry = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools);
  const emit: Emit = (event) => options.onEvent?.(event);
  const conversation = [...options.messages];
  const result: AgentResult = { text: '', reasoning: '', toolCalls: [], messages: [], steps: 0, aborted: false };
  const add = (message: ChatMessage) => {
    conversation.push(message);
    result.messages.push(message);
  };
  let partial = { text: '', reasoning: '' };
  // Calls of the last assistant message still without a result: an interrupted turn answers them with an
  // error so the stored history stays valid for chat-completions servers (every tool call needs a result).
  let unanswered: ToolCallRequest[] = [];
  // The call being run (its start shown to the client), kept as interrupted when the turn stops meanwhile.
  let running: ToolCallRequest | undefined;

  try {
    for (;;) {
      throwIfAborted(context.signal);
      if (result.steps >= maxSteps) throw new StepLimitError(maxSteps);
      result.steps += 1;
      partial = { text: '', reasoning: '' };
      const step = result.steps;
      const calls = await inSpan(
        'llm.call',
        context.trace,
        { 'llm.provider': options.provider.name, 'llm.step': step },
        async (span, trace) => {
          const asked = await runStep(options, conversation, registry, emit, partial, trace);
          span?.setAttributes({ 'llm.tool_calls': asked.length, 'llm.text_chars': partial.text.length });
          return asked;
        },
        'client',
      );
      result.text += partial.text;
      result.reasoning += partial.reasoning;
      add(
        calls.length > 0
          ? { role: 'assistant', content: partial.text, toolCalls: calls }
          : { role: 'assistant', content: partial.text },
      );
      partial = { text: '', reasoning: '' };
      if (calls.length === 0) break;
      unanswered = [...calls];
      for (const call of calls) {
        running = call;
        const done = await inSpan('tool.call', context.trace, { 'tool.name': call.name }, async (span) => {
          const completed = await executeCall(call, registry, context, emit);
          span?.setAttributes({ 'tool.kind': completed.kind, 'tool.status': completed.status });
          return completed;
        });
        running = undefined;
        unanswered.shift();
        result.toolCalls.push(done);
        add({
          role: 'tool',
          toolCallId: call.id,
          content: done.status === 'error' ? toolErrorContent(done.output) : done.output,
        });
      }
    }
  } catch (error) {
    // Keep what the user already saw of an interrupted step.
    result.text += partial.text;
    result.reasoning += partial.reasoning;
    if (partial.text) add({ role: 'assistant', content: partial.text });
    const aborted = context.signal.aborted || isAbortError(error);
    const why = aborted ? 'the turn was stopped' : errorMessage(error);
    for (const call of unanswered) add({ role: 'tool', toolCallId: call.id, content: toolErrorContent(why) });
    if (running) result.toolCalls.push(interruptedCall(running, registry, why));
    if (aborted) {
      result.aborted = true;
    } else {
      result.error = errorMessage(error);
      try {
        await emit({ type: 'error', message: result.error });
      } catch {
        // Its reader is gone: the failure is in the result all the same.
      }
    }
  }
  return result;
}
