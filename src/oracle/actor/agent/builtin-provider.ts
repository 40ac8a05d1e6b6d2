// Thread: actor host
// The built-in agent: deterministic, no network. It answers every message with a short reply shaped by
// the saved preferences (read from the system prompt's "User Preferences" section, as a model would),
// turns preference requests into a real `set_user_preferences` tool call, runs "use <tool> {json}" through
// any offered tool, and confirms tool results on the following step.
import { randomUUID } from 'node:crypto';
import { parseToolArgs, readIntent, type PreferenceRequest } from './builtin-intents.js';
import { TOOL_ERROR_PREFIX, throwIfAborted } from '../../chat/agent-errors.js';
import { readPreferencesSection } from './system-prompt.js';
import { describeAttachments } from '../../chat/attachments.js';
import type { ChatMessage, Provider, ProviderEvent, ProviderRequest, ToolCallRequest } from '../../chat/agent-types.js';

const SET_USER_PREFERENCES = 'set_user_preferences';
const FORMAL = new Set(['formal', 'semi-formal', 'professional', 'academic', 'technical']);
const CASUAL = new Set(['casual', 'friendly']);

type Step = { reasoning?: string; text?: string; toolCall?: ToolCallRequest };

function greeting(system: string): string {
  const prefs = readPreferencesSection(system);
  const user = prefs.userName;
  const agent = prefs.agentName ?? 'the built-in assistant of this oracle';
  let line: string;
  if (prefs.formality && FORMAL.has(prefs.formality)) line = `Good day${user ? `, ${user}` : ''}. I am ${agent}.`;
  else if (prefs.formality && CASUAL.has(prefs.formality)) line = `Hey${user ? ` ${user}` : ''}! I'm ${agent}.`;
  else line = `Hello${user ? ` ${user}` : ''}! I'm ${agent}.`;
  if (prefs.language) line += ` (You asked for replies in ${prefs.language}; the built-in agent writes English only.)`;
  return line;
}

function describePreferences(update: PreferenceRequest): string {
  const parts: string[] = [];
  if (update.userName) parts.push(`I'll call you ${update.userName}`);
  if (update.agentName) parts.push(`I'll go by ${update.agentName}`);
  if (update.language) parts.push(`I'll reply in ${update.language}`);
  if (update.formality) parts.push(`I'll keep a ${update.formality} tone`);
  return parts.join(', ');
}

function chatReply(system: string, text: string): string {
  return (
    `${greeting(system)} You said: "${text.trim()}". ` +
    'Ask me to "call me <name>", "call yourself <name>", "reply in <language>" or "be more formal" or "be more casual", ' +
    'and I will remember it.'
  );
}

function answerUser(request: ProviderRequest, system: string, text: string): Step {
  const offered = new Set(request.tools.map((tool) => tool.name));
  const intent = readIntent(text);
  if (intent.type === 'use-tool' && (offered.has(intent.toolName) || intent.argsText !== '')) {
    if (!offered.has(intent.toolName)) {
      const names = [...offered].join(', ') || 'none';
      return { text: `I have no tool named ${intent.toolName}. Tools I can use: ${names}.` };
    }
    const parsed = parseToolArgs(intent.argsText);
    if (!parsed.ok) return { text: `I can't call ${intent.toolName}: its arguments are ${parsed.problem}.` };
    return {
      reasoning: `The user asked for the tool ${intent.toolName}.`,
      toolCall: { id: `call_${randomUUID()}`, name: intent.toolName, arguments: JSON.stringify(parsed.args) },
    };
  }
  if (intent.type === 'preferences') {
    if (!offered.has(SET_USER_PREFERENCES))
      return { text: "I can't save preferences here: the preferences tool is not available." };
    return {
      reasoning: `The user asked to change preferences: ${Object.keys(intent.update).join(', ')}.`,
      toolCall: { id: `call_${randomUUID()}`, name: SET_USER_PREFERENCES, arguments: JSON.stringify(intent.update) },
    };
  }
  return { text: chatReply(system, text) };
}

/** The step after tool results: confirm each call of the last assistant message. */
function confirmTools(messages: ChatMessage[]): Step {
  const assistantAt = messages.findLastIndex((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0);
  const assistant = messages[assistantAt] as Extract<ChatMessage, { role: 'assistant' }>;
  const results = new Map<string, string>();
  for (const m of messages.slice(assistantAt + 1)) if (m.role === 'tool') results.set(m.toolCallId, m.content);
  const sentences = (assistant.toolCalls ?? []).map((call) => {
    const result = results.get(call.id) ?? '';
    const failed = result.startsWith(TOOL_ERROR_PREFIX);
    const problem = result.slice(TOOL_ERROR_PREFIX.length);
    if (call.name === SET_USER_PREFERENCES) {
      if (failed) return `I couldn't save your preferences: ${problem}`;
      return `Done: ${describePreferences(JSON.parse(call.arguments) as PreferenceRequest)} from now on.`;
    }
    return failed ? `${call.name} failed: ${problem}` : `${call.name} returned: ${result}`;
  });
  return { text: sentences.join(' ') };
}

function nextStep(request: ProviderRequest): Step {
  const { messages } = request;
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const last = messages.at(-1);
  if (last?.role === 'tool') return confirmTools(messages);
  if (last?.role === 'user') {
    const step = answerUser(request, system, last.content);
    // What a model reads of the attachments: their description (attachments.ts).
    if (last.attachments?.length && step.text !== undefined)
      step.text += ` ${describeAttachments(last.attachments).replace(/\n/g, ' ')}`;
    return step;
  }
  return { text: greeting(system) };
}

/** Yields to the event loop so other streams (and an abort) get their turn between deltas. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

export function builtinProvider(): Provider {
  return {
    name: 'built-in',
    async *stream(request): AsyncGenerator<ProviderEvent> {
      throwIfAborted(request.signal);
      const step = nextStep(request);
      if (step.reasoning) yield { type: 'reasoning', delta: step.reasoning };
      for (const piece of step.text?.match(/\S+\s*/g) ?? []) {
        await tick();
        throwIfAborted(request.signal);
        yield { type: 'text', delta: piece };
      }
      if (step.toolCall) yield { type: 'tool_call', call: step.toolCall };
      yield { type: 'finish', reason: step.toolCall ? 'tool_calls' : 'stop' };
    },
  };
}
