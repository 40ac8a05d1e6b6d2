// Thread: actor host
// An OpenAI-compatible streaming chat-completions client with tool calling (OpenAI, OpenRouter, vLLM,
// Ollama, llama.cpp server): POST {baseUrl}/chat/completions with `stream: true`, read the SSE answer with
// eventsource-parser, assemble tool-call fragments, stop at `[DONE]`.
import { createParser } from 'eventsource-parser';
import { ProviderError, throwIfAborted } from '../../chat/agent-errors.js';
import { withAttachmentsText } from '../../chat/attachments.js';
import { ToolCallAssembler, type ToolCallFragment } from './tool-call-assembler.js';
import { type Context, tracing } from '../../../telemetry/index.js';
import type { ChatMessage, Provider, ProviderEvent, ProviderRequest, ToolSpec } from '../../chat/agent-types.js';

export interface OpenAiProviderOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Whether the model reads images: attachments that are images are then sent as image parts. */
  vision?: boolean;
}

/** Longest part of an error answer's body quoted in the error message. */
const EXCERPT_CHARS = 300;

interface ChunkDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: ToolCallFragment[];
}

interface Chunk {
  choices?: { delta?: ChunkDelta; finish_reason?: string | null }[];
  error?: { message?: string } | string;
}

/** A user's message: its attachments described in the text; images with a URL as image parts for a vision model. */
function toWireUser(message: Extract<ChatMessage, { role: 'user' }>, vision: boolean): Record<string, unknown> {
  const text = withAttachmentsText(message.content, message.attachments);
  const images = vision ? (message.attachments ?? []).filter((attachment) => attachment.url) : [];
  if (images.length === 0) return { role: 'user', content: text };
  return {
    role: 'user',
    content: [{ type: 'text', text }, ...images.map((image) => ({ type: 'image_url', image_url: { url: image.url } }))],
  };
}

function toWireMessage(message: ChatMessage, vision: boolean): Record<string, unknown> {
  switch (message.role) {
    case 'user':
      return toWireUser(message, vision);
    case 'assistant':
      if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content || null,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments || '{}' },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default:
      return { role: message.role, content: message.content };
  }
}

function toWireTool(tool: ToolSpec): Record<string, unknown> {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

async function post(
  url: string,
  body: unknown,
  apiKey: string | undefined,
  signal: AbortSignal,
  trace: Context | undefined,
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  // Tracing on, in a recorded trace: the provider call's context (traceparent, tracestate) goes to the LLM server.
  if (trace) tracing?.inject(headers, trace);
  try {
    return await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
  } catch (error) {
    if (signal.aborted) throw error;
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new ProviderError(`Could not reach the LLM server at ${url}: ${cause}`, undefined, { cause: error });
  }
}

/** Turns one parsed chunk into events; tool-call fragments go to the assembler until the stream ends. */
function* readChunk(data: string, assembler: ToolCallAssembler, finish: { reason: string }): Generator<ProviderEvent> {
  let chunk: Chunk;
  try {
    chunk = JSON.parse(data) as Chunk;
  } catch {
    throw new ProviderError(`The LLM server sent an unreadable stream event: ${excerpt(data)}`);
  }
  if (chunk.error) {
    const message =
      typeof chunk.error === 'string' ? chunk.error : (chunk.error.message ?? JSON.stringify(chunk.error));
    throw new ProviderError(`The LLM server reported an error: ${message}`);
  }
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta ?? {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (reasoning) yield { type: 'reasoning', delta: reasoning };
    if (delta.content) yield { type: 'text', delta: delta.content };
    delta.tool_calls?.forEach((fragment, position) => {
      assembler.add(fragment, position);
    });
    if (choice.finish_reason) finish.reason = choice.finish_reason;
  }
}

async function* readStream(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event.data) });
  const decoder = new TextDecoder();
  const assembler = new ToolCallAssembler();
  const finish = { reason: 'stop' };
  let done = false;
  // Leaving this loop early (break, throw, abort) cancels the body, which releases the connection.
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (pending.length > 0 && !done) {
      const data = pending.shift()!;
      if (data.trim() === '[DONE]') done = true;
      else yield* readChunk(data, assembler, finish);
    }
    throwIfAborted(signal);
    if (done) break;
  }
  // Some servers close the stream without `[DONE]`; what arrived still counts.
  for (const call of assembler.finish()) yield { type: 'tool_call', call };
  yield { type: 'finish', reason: finish.reason };
}

export function openAiProvider(options: OpenAiProviderOptions): Provider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    name: `openai-compatible (${options.model})`,
    async *stream(request: ProviderRequest) {
      const body: Record<string, unknown> = {
        model: options.model,
        stream: true,
        messages: request.messages.map((message) => toWireMessage(message, options.vision === true)),
      };
      if (request.tools.length > 0) body.tools = request.tools.map(toWireTool);
      const response = await post(url, body, options.apiKey, request.signal, request.trace);
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        throw new ProviderError(
          `The LLM server answered ${response.status} ${response.statusText}${text ? `: ${excerpt(text)}` : ''}`,
          response.status,
        );
      }
      if (!response.body) throw new ProviderError('The LLM server sent an empty answer');
      yield* readStream(response.body, request.signal);
    },
  };
}
