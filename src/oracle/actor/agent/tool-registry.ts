// Thread: actor host
// The tools of one turn, by name. The first tool of a name wins, so a client-declared browser tool or
// action can never replace a server tool of the same name (pass server tools first).
import type { Tool, ToolSpec } from '../../chat/agent-types.js';

export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.add(tool);
  }

  /** Adds a tool unless one of that name exists; returns whether it was added. */
  add(tool: Tool): boolean {
    if (this.#tools.has(tool.name)) return false;
    this.#tools.set(tool.name, tool);
    return true;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  get size(): number {
    return this.#tools.size;
  }

  /** What the provider is told about the tools. */
  specs(): ToolSpec[] {
    return [...this.#tools.values()].map(({ name, description, parameters }) => ({ name, description, parameters }));
  }
}
