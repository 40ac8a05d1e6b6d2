// Thread: any (shared, pure: no state of its own)
// The vocabulary of the agent: chat messages, tools, provider events and loop events.
// Nothing here knows about HTTP, uWebSockets.js or threads: the chat actor runs it on a worker thread.
import type { ModelAttachment } from './attachments.js';
import type { UserPreferences } from '../plugins/user-preferences/schema.js';
import type { Context } from '../../telemetry/index.js';

/** A tool call the model asked for; `arguments` is the JSON text exactly as the model produced it. */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

/** One message of the conversation sent to a provider (close to OpenAI's chat-completions messages). */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string; attachments?: ModelAttachment[] }
  | { role: 'assistant'; content: string; toolCalls?: ToolCallRequest[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** What a provider is told about a tool. `parameters` is a JSON schema of the arguments object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ProviderRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  signal: AbortSignal;
  /** Tracing on, in a recorded trace: the provider call's context, sent on to the LLM server (traceparent). */
  trace?: Context;
}

export type ProviderEvent =
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | { type: 'tool_call'; call: ToolCallRequest }
  | { type: 'finish'; reason: string };

/** A model: takes the conversation and streams its answer. Aborting `signal` makes the iterable throw. */
export interface Provider {
  readonly name: string;
  stream(request: ProviderRequest): AsyncIterable<ProviderEvent>;
}

/**
 * Where a tool runs. 'server' tools run in the actor; 'browser' tools on the user's tab (answered over the
 * WebSocket); 'action' tools are agent-UI actions (reported as `action_call` frames); 'mcp' tools on an MCP server.
 */
export type ToolKind = 'server' | 'browser' | 'action' | 'mcp';

/** Who and what a turn is about; handed to plugins before the agent is built and to every tool call. */
export interface TurnContext {
  readonly userDid: string;
  readonly oracleDid: string;
  readonly sessionId: string;
  readonly requestId: string;
  /** Aborted when the generation is stopped (abort route, disconnect, newer message). */
  readonly signal: AbortSignal;
  /** The user's timezone (`timezone` of the body or `x-timezone`), when known. */
  readonly timezone?: string;
  /** Saved user preferences, loaded by the user-preferences plugin before the agent is built. */
  preferences?: UserPreferences | null;
  /** The turn is run again after its node died (runs/open-runs.ts): it was charged the first time. */
  readonly recovery?: boolean;
  /** Tracing on, in a recorded trace: the context of the turn's actor span (its provider and tool calls' parent). */
  readonly trace?: Context;
}

export interface ToolCallContext extends TurnContext {
  readonly toolCallId: string;
}

export interface Tool extends ToolSpec {
  readonly kind: ToolKind;
  /** Runs the tool; the returned text is what the model sees. Throwing reports an error to model and client. */
  execute(args: Record<string, unknown>, context: ToolCallContext): Promise<string>;
}

/** What the agent loop reports while it runs, in order. The SSE layer turns these into frames (sse-frames.ts). */
export type AgentEvent =
  | { type: 'message'; delta: string }
  | { type: 'reasoning'; delta: string }
  | {
      type: 'tool_call';
      phase: 'start';
      toolCallId: string;
      toolName: string;
      args: Record<string, unknown>;
      status: 'isRunning';
    }
  | {
      type: 'tool_call';
      phase: 'end';
      toolCallId: string;
      toolName: string;
      args: Record<string, unknown>;
      status: 'done';
      output?: string;
      error?: string;
    }
  | {
      type: 'action_call';
      phase: 'start';
      toolCallId: string;
      toolName: string;
      args: Record<string, unknown>;
      status: 'isRunning';
    }
  | {
      type: 'action_call';
      phase: 'end';
      toolCallId: string;
      toolName: string;
      args: Record<string, unknown>;
      status: 'done' | 'error';
      output?: string;
      error?: string;
    }
  | { type: 'error'; message: string };

/** A tool call as it ended up in the turn (for the transcript: `toolCalls` of the ai message). */
export interface CompletedToolCall {
  id: string;
  name: string;
  kind: ToolKind | 'unknown';
  args: Record<string, unknown>;
  output: string;
  status: 'done' | 'error';
  /** The turn stopped (abort, failure) while this call ran: it has no result, `output` says so. */
  interrupted?: true;
}

export interface AgentResult {
  /** The assistant's text of the whole turn (all steps joined). */
  text: string;
  reasoning: string;
  toolCalls: CompletedToolCall[];
  /** Messages the turn added after the input (assistant and tool messages), ready to append to the history. */
  messages: ChatMessage[];
  /** Provider calls made. */
  steps: number;
  aborted: boolean;
  /** Set when the turn failed (provider error, step bound); an `error` event was reported too. */
  error?: string;
}
