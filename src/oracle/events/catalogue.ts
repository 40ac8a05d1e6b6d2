// Thread: main
// The event channel's vocabulary (oracle-wire-format.md, "WebSocket event channel"): every event name in
// both directions, and the payloads the main thread answers itself. Events a session actor produces
// (tool calls, reasoning, ...) are built on its worker (turn-events.ts, bridge.ts) and carry the same fields.

/** Client -> server. */
export const CLIENT_EVENTS = [
  'ping',
  'status',
  'subscribe',
  'list-events',
  'tool_result',
  'action_call_result',
] as const;
export type ClientEventName = (typeof CLIENT_EVENTS)[number];

/** Server -> client. `error` answers a frame the server could not use. */
export const SERVER_EVENTS = [
  'connected',
  'pong',
  'status',
  'subscribed',
  'available-events',
  'tool_call',
  'action_call',
  'render_component',
  'browser_tool_call',
  'router_update',
  'message_cache_invalidation',
  'reasoning',
  'error',
  'oracle_event',
] as const;
export type ServerEventName = (typeof SERVER_EVENTS)[number];

/**
 * Socket.IO only: the name of the second copy of an ENVELOPED_EVENTS event, `{ eventName, payload }`. SDK 1.4.0's
 * catch-all (`onAny`) reads only that shape, whatever the name; every named listener keeps its bare payload.
 */
export const ENVELOPE_EVENT = 'oracle_event';

/**
 * The events the SDK's catch-all does something useful with: a tool call or a component shown as a message
 * (`handleNewEvent`; its own turn's tool calls it skips), the history refetched. Not `router_update` and
 * `reasoning` (it would show each as a growing "Thinking..." message), nor `browser_tool_call` and `action_call`
 * (it drops their envelopes and answers the named events).
 */
export const ENVELOPED_EVENTS = new Set<string>(['tool_call', 'render_component', 'message_cache_invalidation']);

/** Events an actor publishes that ask the client to run something and answer (the bridge waits for them). */
export const CLIENT_CALL_EVENTS = new Set<string>(['browser_tool_call', 'action_call']);

const now = () => new Date().toISOString();

export const payloads = {
  connected: (sessionId: string) => ({ message: 'Connected successfully', sessionId, timestamp: now() }),
  pong: (sessionId: string) => ({ timestamp: now(), sessionId }),
  status: (sessionId: string, stats: { activeSessions: number; totalConnections: number }) => ({
    connected: true,
    sessionId,
    activeSessions: stats.activeSessions,
    totalConnections: stats.totalConnections,
    timestamp: now(),
  }),
  subscribed: (sessionId: string, subscriptions: readonly string[]) => ({ sessionId, subscriptions, timestamp: now() }),
  availableEvents: (sessionId: string) => ({
    clientEvents: CLIENT_EVENTS,
    serverEvents: SERVER_EVENTS,
    sessionId,
    timestamp: now(),
  }),
  /** `event` names the client frame that failed, when it had a name. */
  error: (message: string, event?: string) => ({
    message,
    ...(event === undefined ? {} : { event }),
    timestamp: now(),
  }),
};
