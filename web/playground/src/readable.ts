// Shows what the server sent in words a person reads: tool calls as name(arguments) with their outcome, channel
// events as one line each (the full payload folded underneath), and HTTP refusals as sentences.
import { el } from './dom.js';

const MAX_INLINE = 120;

/** A value on one line: strings as they are (quoted), other values as compact JSON; cut past `max` characters. */
export function inline(value: unknown, max = MAX_INLINE): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `a: 1, b: "x"`: an object's fields on one line; any other value as `inline` writes it. */
export function fields(value: unknown): string {
  return isRecord(value)
    ? Object.entries(value)
        .map(([key, field]) => `${key}: ${inline(field, 60)}`)
        .join(', ')
    : inline(value);
}

/** `name(a: 1, b: "x")`: a tool call as a person writes it. */
export function callText(name: string, args: unknown): string {
  return `${name}(${isRecord(args) ? fields(args) : ''})`;
}

const STATUS_WORDS: Record<string, string> = { isRunning: 'running…', done: 'done', error: 'failed', failed: 'failed' };

/** A tool call's status as a word. */
export function statusWord(status: string): string {
  return STATUS_WORDS[status] ?? status;
}

/** A tool's output as sent (often JSON text): an object's fields on one line when short, else in full. */
export function outputText(output: unknown): string {
  let value = output;
  if (typeof output === 'string' && /^\s*\{/.test(output)) {
    try {
      value = JSON.parse(output);
    } catch {
      // Not JSON after all: shown as the text it is.
    }
  }
  const line = isRecord(value) ? fields(value) : pretty(value);
  return line.length <= 80 && !line.includes('\n') ? line : pretty(value);
}

/** A value shown in full, readable: strings as text, objects pretty-printed. */
export function pretty(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** One line for a channel event: what happened, in a few words. */
export function eventSummary(event: string, data: Record<string, unknown>): string {
  switch (event) {
    case 'browser_tool_call':
    case 'action_call':
      return callText(String(data.toolName), data.args);
    case 'tool_call': {
      const { toolName, ...args } = (data.args ?? {}) as Record<string, unknown>;
      return `${callText(String(toolName ?? data.toolName), args)} ${statusWord(String(data.status))}`;
    }
    case 'tool_result':
    case 'action_call_result':
      return data.error ? `failed: ${fields(data.error)}` : `→ ${fields(data.result)}`;
    case 'router_update':
      return data.step === 'tools' ? 'running tools' : 'back to the model';
    case 'connected':
    case 'error':
      return String(data.message ?? '');
    case 'message_cache_invalidation':
      return 'the turn is stored';
    case 'reasoning':
      return inline(data.reasoning ?? '', 80);
    default:
      return '';
  }
}

/** A log entry for an event: arrow, name and summary on one line; the payload folded underneath. */
export function eventItem(event: string, data: Record<string, unknown>, direction: 'in' | 'out'): HTMLLIElement {
  const item = el('li', '', { 'data-event': event, 'data-direction': direction });
  const time = new Date().toLocaleTimeString();
  const details = el('details');
  const summary = el('summary');
  summary.append(
    el('span', time, { class: 'time' }),
    ` ${direction === 'in' ? '←' : '→'} `,
    el('strong', event),
    ` ${eventSummary(event, data)}`,
  );
  details.append(summary, el('pre', pretty(data)));
  item.append(details);
  return item;
}

/** A refusal of the server in words; a rate limit says when to try again (Retry-After). */
export function refusal(status: number, message: string, retryAfter: string | null): string {
  if (status === 429) {
    const wait = retryAfter && /^\d+$/.test(retryAfter) ? ` Try again in ${retryAfter} s.` : ' Try again shortly.';
    return `Too many requests from this address: the server's rate limit (RATE_LIMIT_MAX requests per window) refused this one.${wait}`;
  }
  return `HTTP ${status}: ${message}`;
}
