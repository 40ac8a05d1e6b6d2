// Browser tools the page offers the agent with every message; the agent's browser_tool_call events are
// answered from here (the built-in agent calls one for "use <tool> {json}").
import type { PageTool } from './oracle-client.js';

interface ToolDefinition extends PageTool {
  run(args: Record<string, unknown>): unknown;
}

const objectSchema = (properties: Record<string, unknown> = {}) => ({ type: 'object', properties });

const TOOLS: ToolDefinition[] = [
  {
    name: 'getPageTitle',
    description: 'The title of the page the user has open',
    schema: objectSchema(),
    run: () => ({ title: document.title }),
  },
  {
    name: 'getPageUrl',
    description: 'The address of the page the user has open',
    schema: objectSchema(),
    run: () => ({ url: location.href }),
  },
  {
    name: 'getViewport',
    description: "The size of the user's browser window in CSS pixels",
    schema: objectSchema(),
    run: () => ({ width: innerWidth, height: innerHeight }),
  },
  {
    name: 'getTextSelection',
    description: 'The text the user has selected on the page',
    schema: objectSchema(),
    run: () => ({ text: getSelection()?.toString() ?? '' }),
  },
];

/** The declarations sent in a message's `tools`. */
export const pageTools: PageTool[] = TOOLS.map(({ name, description, schema }) => ({ name, description, schema }));

/** `{ result }` or `{ error }` for a call the agent made. */
export function runPageTool(name: string, args: unknown): { result: unknown } | { error: string } {
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (!tool) return { error: `This page has no tool named ${name}` };
  try {
    return { result: tool.run(typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : {}) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
