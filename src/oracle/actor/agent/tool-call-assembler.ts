// Thread: actor host
// Chat-completions streams send a tool call in fragments: `delta.tool_calls[i]` carries an `index`, the `id`
// and function `name` usually once, and pieces of the JSON `arguments` that must be concatenated in order.
import { randomUUID } from 'node:crypto';
import type { ToolCallRequest } from '../../chat/agent-types.js';

export interface ToolCallFragment {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

export class ToolCallAssembler {
  readonly #calls = new Map<number, { id?: string; name: string; arguments: string }>();

  /** `position` is the fragment's place in its delta array, used when a server omits `index`. */
  add(fragment: ToolCallFragment, position: number): void {
    const index = typeof fragment.index === 'number' ? fragment.index : position;
    let call = this.#calls.get(index);
    if (!call) {
      call = { name: '', arguments: '' };
      this.#calls.set(index, call);
    }
    if (fragment.id && !call.id) call.id = fragment.id;
    // Servers send the name once; a repeated full name must not be doubled, so only the first one counts.
    if (fragment.function?.name && !call.name) call.name = fragment.function.name;
    if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
  }

  /** The assembled calls in index order. */
  finish(): ToolCallRequest[] {
    return [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .filter(([, call]) => call.name !== '')
      .map(([, call]) => ({ id: call.id ?? `call_${randomUUID()}`, name: call.name, arguments: call.arguments }));
  }
}
