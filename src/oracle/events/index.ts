// Thread: main
// The oracle's event channel (spec: Events): a native WebSocket at /ws and Socket.IO at /socket.io/ on the
// front door's uWS app, one EventChannel behind both, fed by the events the chat actors publish.
import type { Config } from '../../app/config.js';
import type { SocketFrontDoor } from '../../http/websocket.js';
import type { Logger } from '../../base/log.js';
import type { Actors } from '../../runtime/router.js';
import type { UcanAuthenticator } from '../auth/authenticator.js';
import type { RevocationRepository } from '../identity/revocations.js';
import type { SessionReads } from '../routes/session-reads.js';
import { EventChannel, type TopicInterest } from './channel.js';
import { authenticateHandshake, type HandshakeInput } from './handshake.js';
import { nativeFanOut, nativeRoute } from './native.js';
import { attachSocketIoTransport } from './socket-io.js';

export const NATIVE_PATH = '/ws';
export const SOCKET_IO_PATH = '/socket.io';
/** Close code sent to every socket when the server stops (RFC 6455: going away). */
const GOING_AWAY = 1001;

export interface EventChannelOptions {
  config: Pick<Config, 'WS_IDLE_TIMEOUT_SECONDS' | 'WS_MAX_PAYLOAD_BYTES' | 'WS_MAX_BACKPRESSURE_BYTES'>;
  actors: Actors;
  authenticator: UcanAuthenticator;
  /** Told of each revocation, so the sockets authenticated with it close. */
  revocations: Pick<RevocationRepository, 'onRevoked'>;
  sessions: SessionReads;
  log: Logger;
  /** Cluster mode: the ClusterEventBus (src/cluster/event-bus.ts), told which sessions have sockets here. */
  interest?: TopicInterest;
}

export interface RunningEventChannel {
  readonly channel: EventChannel;
  stop(): Promise<void>;
}

export function startEventChannel(front: SocketFrontDoor, options: EventChannelOptions): RunningEventChannel {
  const { config, actors, log } = options;
  const channel = new EventChannel({ actors, sessions: options.sessions, log, interest: options.interest });
  const accept = (input: HandshakeInput) => authenticateHandshake(options, input);
  // A reader this far behind counts as too slow and is closed (a never-reading client holds no more than this).
  const maxBackpressureBytes = config.WS_MAX_BACKPRESSURE_BYTES;

  front.websocket(NATIVE_PATH, nativeRoute({ channel, accept, highWaterBytes: maxBackpressureBytes / 2, log }), {
    idleTimeoutSeconds: config.WS_IDLE_TIMEOUT_SECONDS,
    maxPayloadBytes: config.WS_MAX_PAYLOAD_BYTES,
    maxBackpressureBytes,
  });
  channel.addTransport(
    'websocket',
    nativeFanOut((topic, text) => front.publish(topic, text)),
  );

  const io = front.socketIo({
    path: SOCKET_IO_PATH,
    maxPayloadBytes: config.WS_MAX_PAYLOAD_BYTES,
    idleTimeoutSeconds: config.WS_IDLE_TIMEOUT_SECONDS,
    maxBackpressureBytes,
  });
  attachSocketIoTransport(io, { channel, accept, log });

  const unsubscribe = actors.onEvent((event) => channel.publish(event));
  options.revocations.onRevoked((cid) => channel.revoked(cid));
  return {
    channel,
    async stop() {
      unsubscribe();
      channel.closeAll(GOING_AWAY, 'server shutting down');
      await new Promise<void>((resolve) => io.close(() => resolve()));
    },
  };
}
