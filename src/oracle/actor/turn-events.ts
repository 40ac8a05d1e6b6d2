// Thread: actor host
// What one chat turn tells the session's sockets (runs on the actor host, beside the SSE frames):
//   router_update       the loop moves between the model ("agent") and tool execution ("tools")
//   reasoning           the model's reasoning deltas (the SSE frame's payload)
//   tool_call           server, browser and MCP tool calls starting and ending (the SSE frame's payload)
//   render_component    an action declared with `hasRender` completed: the client renders its component
//   message_cache_invalidation  the reply is stored: cached message lists are stale
// `browser_tool_call` and `action_call` themselves are published by the bridge (bridge.ts) when a call starts.
import type { SseFrame } from '../sse-frames.js';
import type { AgentEvent } from '../chat/agent-types.js';
import type { Publish } from './bridge.js';

export type RouterStep = 'agent' | 'tools';

export class TurnEvents {
  #step: RouterStep | undefined;
  readonly #rendered: ReadonlySet<string>;

  constructor(
    private readonly publish: Publish,
    private readonly sessionId: string,
    private readonly requestId: string,
    agActions: readonly { name: string; hasRender?: boolean }[] = [],
  ) {
    this.#rendered = new Set(agActions.filter((action) => action.hasRender).map((action) => action.name));
  }

  /** One loop event, with the SSE frame built for it. */
  agentEvent(event: AgentEvent, frame: SseFrame): void {
    switch (event.type) {
      case 'message':
        this.route('agent');
        return;
      case 'reasoning':
        this.route('agent');
        this.publish(this.sessionId, 'reasoning', frame.data);
        return;
      case 'tool_call':
        this.route('tools');
        this.publish(this.sessionId, 'tool_call', frame.data);
        return;
      case 'action_call':
        this.route('tools');
        if (event.phase === 'end' && event.status === 'done' && this.#rendered.has(event.toolName)) this.#render(event);
        return;
      case 'error':
        return;
    }
  }

  /** Announces a step of the loop once per change. */
  route(step: RouterStep): void {
    if (this.#step === step) return;
    this.#step = step;
    this.publish(this.sessionId, 'router_update', {
      sessionId: this.sessionId,
      requestId: this.requestId,
      step,
      timestamp: new Date().toISOString(),
    });
  }

  /** The turn's messages are committed. */
  stored(): void {
    this.publish(this.sessionId, 'message_cache_invalidation', {
      sessionId: this.sessionId,
      requestId: this.requestId,
      status: 'done',
      timestamp: new Date().toISOString(),
    });
  }

  #render(event: Extract<AgentEvent, { type: 'action_call'; phase: 'end' }>): void {
    this.publish(this.sessionId, 'render_component', {
      sessionId: this.sessionId,
      requestId: this.requestId,
      toolCallId: event.toolCallId,
      // What the SDK names a component's message by (`<requestId>-render_component-<eventId>`).
      eventId: event.toolCallId,
      componentName: event.toolName,
      args: event.args,
      status: 'done',
      output: event.output ?? '',
    });
  }
}
