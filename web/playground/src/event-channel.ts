// The native WebSocket event channel (/ws, docs/events.md): JSON frames `{ event, data }` both ways. Browser
// tool calls are answered from the page tools; every event is handed to `onEvent` for the log.
import type { OracleClient } from './oracle-client.js';
import { runPageTool } from './page-tools.js';

export interface ChannelEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface EventChannelHandlers {
  onEvent(event: ChannelEvent, direction: 'in' | 'out'): void;
  onState(state: 'connecting' | 'open' | 'closed', reason?: string): void;
}

export class EventChannel {
  #socket: WebSocket | undefined;

  constructor(private readonly handlers: EventChannelHandlers) {}

  /** Follows `sessionId` (closing the socket of the session followed before); resolves once `connected` arrived. */
  async open(client: OracleClient, sessionId: string): Promise<void> {
    this.close();
    this.handlers.onState('connecting');
    const socket = new WebSocket(await client.socketUrl(sessionId));
    this.#socket = socket;
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('message', (message) => {
        if (this.#socket !== socket) return; // a socket being replaced
        let frame: ChannelEvent;
        try {
          frame = JSON.parse(String(message.data)) as ChannelEvent;
        } catch {
          return;
        }
        this.handlers.onEvent(frame, 'in');
        if (frame.event === 'connected') {
          this.handlers.onState('open');
          resolve();
        }
        if (frame.event === 'browser_tool_call') this.#answer(frame.data);
      });
      socket.addEventListener('close', (event) => {
        const reason = event.reason || `code ${event.code}`;
        reject(new Error(`The event channel closed (${reason})`));
        // Closed by the server or the network; a socket the page closed itself was reported by close().
        if (this.#socket !== socket) return;
        this.#socket = undefined;
        // No reconnect on 4401: the page's sockets stand on proof-less invocations (its own key), which the
        // server never ends for expiry or revocation (docs/events.md); any other close is shown as it is.
        this.handlers.onState('closed', reason);
      });
    });
  }

  send(event: string, data?: Record<string, unknown>): void {
    if (this.#socket?.readyState !== WebSocket.OPEN) return;
    this.#socket.send(JSON.stringify(data === undefined ? { event } : { event, data }));
    this.handlers.onEvent({ event, data: data ?? {} }, 'out');
  }

  close(): void {
    if (!this.#socket) return;
    this.#socket.close(1000, 'playground: session changed');
    this.#socket = undefined;
    this.handlers.onState('closed');
  }

  #answer(call: Record<string, unknown>): void {
    const outcome = runPageTool(String(call.toolName), call.args);
    this.send('tool_result', { toolCallId: String(call.toolCallId), sessionId: String(call.sessionId), ...outcome });
  }
}
