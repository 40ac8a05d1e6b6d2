// Renders a chat turn in the transcript as its SSE frames arrive: reasoning, tool and action calls, message
// deltas, errors; and the stored transcript of a session (GET /messages/:id).
import { el } from './dom.js';
import { callText, outputText, statusWord } from './readable.js';
import type { SseFrame, TranscriptItem } from './oracle-client.js';

export class TurnView {
  readonly element = el('article', '', { class: 'turn ai', 'data-testid': 'chat-turn', 'data-state': 'streaming' });
  readonly #reasoning = el('details', '', { class: 'reasoning' });
  readonly #reasoningText = el('pre');
  readonly #tools = el('ul', '', { class: 'tool-calls', 'aria-label': 'Tool calls' });
  readonly #message = el('p', '', { class: 'message', 'data-testid': 'chat-reply' });
  readonly #calls = new Map<string, HTMLLIElement>();

  constructor() {
    this.#reasoning.append(el('summary', 'Reasoning'), this.#reasoningText);
    this.element.append(this.#reasoning, this.#tools, this.#message);
  }

  apply({ event, data }: SseFrame): void {
    switch (event) {
      case 'reasoning':
        if (typeof data.reasoning === 'string' && data.reasoning)
          this.#reasoningText.textContent += `${data.reasoning}\n`;
        return;
      case 'message':
        this.#message.textContent += String(data.content ?? '');
        return;
      case 'tool_call': {
        const args = (data.args ?? {}) as Record<string, unknown>;
        const { toolName, ...rest } = args;
        this.#call(String(data.eventId), callText(String(toolName), rest), String(data.status), data.output);
        return;
      }
      case 'action_call':
        this.#call(
          String(data.toolCallId),
          `action ${callText(String(data.toolName), data.args)}`,
          String(data.status),
          data.output ?? data.error,
        );
        return;
      case 'error':
        this.element.append(el('p', `Error: ${String(data.error)}`, { class: 'error', role: 'alert' }));
        this.element.dataset.state = 'error';
        return;
      case 'done':
        if (this.element.dataset.state !== 'error') this.element.dataset.state = 'done';
        return;
    }
  }

  /** The turn failed before or outside its stream (an HTTP error, a dropped connection). */
  fail(message: string): void {
    this.apply({ event: 'error', data: { error: message } });
  }

  #call(id: string, label: string, status: string, output: unknown): void {
    let item = this.#calls.get(id);
    if (!item) {
      item = el('li', '', { 'data-testid': 'chat-tool-call' });
      this.#calls.set(id, item);
      this.#tools.append(item);
    }
    item.dataset.status = status;
    item.replaceChildren(
      el('code', label, { class: 'tool-name' }),
      ' · ',
      el('span', statusWord(status), { class: 'tool-status' }),
    );
    if (output === undefined) return;
    const text = outputText(output);
    // A short one-line result reads inline; a longer one is folded, its first line as the summary.
    if (text.length <= 80 && !text.includes('\n')) {
      item.append(' → ', el('span', text, { class: 'tool-output' }));
      return;
    }
    const details = el('details', '', { class: 'tool-output' });
    details.append(el('summary', `result (${text.length} characters)`), el('pre', text));
    item.append(details);
  }
}

export function humanTurn(text: string): HTMLElement {
  return el('article', text, { class: 'turn human', 'data-testid': 'chat-human' });
}

/** A stored transcript item, shown like a finished turn. */
export function storedTurn(item: TranscriptItem): HTMLElement {
  if (item.type === 'human') return humanTurn(item.content);
  const view = new TurnView();
  if (item.reasoning) view.apply({ event: 'reasoning', data: { reasoning: item.reasoning } });
  for (const [index, call] of (item.toolCalls ?? []).entries()) {
    view.apply({
      event: 'tool_call',
      data: {
        eventId: `stored-${index}`,
        args: { ...(call.args as object), toolName: call.name },
        status: call.status ?? 'done',
        output: call.output,
      },
    });
  }
  view.apply({ event: 'message', data: { content: item.content } });
  view.apply({ event: 'done', data: {} });
  return view.element;
}
