// Thread: main
// The native WebSocket transport at /ws: handshake from the query (`sessionId`, `invocation`,
// `ucanDelegation`) and the headers, JSON text frames `{ "event", "data" }` both ways, uWS pub/sub topics
// for the fan-out (one topic per session).
import type { Logger } from '../../base/log.js';
import { wsEventsSent } from '../../metrics/catalogue.js';
import type { SocketConnection, WebSocketRoute } from '../../http/websocket.js';
import { payloads } from './catalogue.js';
import { ChannelClient, type EventChannel, type FanOut } from './channel.js';
import { FrameError, parseEnvelope } from './frames.js';
import type { ChannelIdentity, HandshakeInput } from './handshake.js';

/** The uWS topic of a session's native sockets (Socket.IO's own topics start with its namespace, `/`). */
export const nativeTopic = (sessionId: string) => `session\u001f${sessionId}`;

const sent = wsEventsSent.with('websocket');

/** Encodes one event as the native socket's frame. */
const nativeFrame = (event: string, data: unknown) => JSON.stringify({ event, data });

class NativeClient extends ChannelClient {
  #socket?: SocketConnection<NativeClient>;

  constructor(
    identity: ChannelIdentity,
    private readonly highWaterBytes: number,
  ) {
    super('websocket', identity);
  }

  attach(socket: SocketConnection<NativeClient>): void {
    this.#socket = socket;
  }

  send(event: string, data: unknown): void {
    this.#socket?.send(nativeFrame(event, data));
    sent.inc();
  }

  join(sessionId: string): void {
    this.#socket?.subscribe(nativeTopic(sessionId));
  }

  close(code: number, reason: string): void {
    this.#socket?.end(code, reason);
  }

  override get congested(): boolean {
    return (this.#socket?.bufferedAmount ?? 0) > this.highWaterBytes;
  }
}

export interface NativeRouteOptions {
  channel: EventChannel;
  accept(input: HandshakeInput): Promise<ChannelIdentity>;
  /** Above this many buffered bytes a socket's plain requests go unanswered until it drains. */
  highWaterBytes: number;
  log: Logger;
}

export function nativeRoute({
  channel,
  accept,
  highWaterBytes,
  log,
}: NativeRouteOptions): WebSocketRoute<NativeClient> {
  return {
    async accept({ query, headers }) {
      const identity = await accept({
        sessionId: query.get('sessionId') ?? undefined,
        invocation: query.get('invocation') ?? undefined,
        ucanDelegation: query.get('ucanDelegation') ?? undefined,
        headers,
      });
      return new NativeClient(identity, highWaterBytes);
    },
    open(socket) {
      socket.data.attach(socket);
      channel.open(socket.data);
    },
    message(socket, text) {
      let frame: ReturnType<typeof parseEnvelope>;
      try {
        frame = parseEnvelope(text);
      } catch (error) {
        if (!(error instanceof FrameError)) throw error;
        return socket.data.send('error', payloads.error(error.message));
      }
      channel.receive(socket.data, frame.event, frame.data);
    },
    close(socket) {
      channel.close(socket.data);
    },
    failed(error) {
      log.error({ err: error }, 'WebSocket handshake failed');
    },
  };
}

/** The native transport's fan-out: one uWS publish per event reaches every socket of the session. */
export function nativeFanOut(publish: (topic: string, text: string) => void): FanOut {
  return (sessionId, event, data) => publish(nativeTopic(sessionId), nativeFrame(event, data));
}
