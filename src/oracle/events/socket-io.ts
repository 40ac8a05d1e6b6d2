// Thread: main
// The Socket.IO transport at /socket.io/ (namespace `/`): the handshake runs as a middleware (query
// `sessionId`, `auth: { invocation, ucanDelegation }`, or the headers); a refused one gets `connect_error`
// and its connection is closed at once. A socket joins the room named by its session id; events go out as
// Socket.IO events, each with its payload as the one argument. The events SDK 1.4.0's catch-all acts on go out a
// second time, right after, as `{ eventName, payload }` on ENVELOPE_EVENT (catalogue.ts, docs/events.md).
import type { Server, Socket } from 'socket.io';
import { HttpError, httpErrors } from '../../http/errors.js';
import type { Logger } from '../../base/log.js';
import { wsEventsSent } from '../../metrics/catalogue.js';
import { ENVELOPE_EVENT, ENVELOPED_EVENTS } from './catalogue.js';
import { ChannelClient, type EventChannel } from './channel.js';
import type { ChannelIdentity, HandshakeInput } from './handshake.js';

const sent = wsEventsSent.with('socket.io');

class SocketIoClient extends ChannelClient {
  constructor(
    private readonly socket: Socket,
    identity: ChannelIdentity,
  ) {
    super('socket.io', identity);
  }

  send(event: string, data: unknown): void {
    this.socket.emit(event, data);
    sent.inc();
  }

  join(sessionId: string): void {
    void this.socket.join(sessionId);
  }

  close(): void {
    this.socket.disconnect(true);
  }
}

export interface SocketIoTransportOptions {
  channel: EventChannel;
  accept(input: HandshakeInput): Promise<ChannelIdentity>;
  log: Logger;
}

type HandshakeAuth = { invocation?: unknown; ucanDelegation?: unknown } | undefined;

export function attachSocketIoTransport(io: Server, { channel, accept, log }: SocketIoTransportOptions): void {
  io.use(function authenticateSocket(socket, next) {
    const { auth, query, headers } = socket.handshake;
    const given = auth as HandshakeAuth;
    accept({
      sessionId: query.sessionId,
      invocation: given?.invocation,
      ucanDelegation: given?.ucanDelegation,
      headers: headers as Record<string, string>,
    }).then(
      (identity) => {
        socket.data.identity = identity;
        next();
      },
      (error: unknown) => {
        if (!(error instanceof HttpError)) log.error({ err: error }, 'Socket.IO handshake failed');
        const refusal = error instanceof HttpError ? error : httpErrors.internal();
        next(Object.assign(new Error(refusal.message), { data: refusal.body }));
        // `next(error)` queues CONNECT_ERROR for this tick; the connection closes right after it went out.
        setImmediate(() => socket.conn.close());
      },
    );
  });

  io.on('connection', (socket) => {
    const client = new SocketIoClient(socket, socket.data.identity as ChannelIdentity);
    channel.open(client);
    socket.onAny((event: string, data: unknown) => channel.receive(client, event, data));
    socket.on('disconnect', () => channel.close(client));
  });

  channel.addTransport('socket.io', (sessionId, event, data) => {
    const room = io.to(sessionId);
    room.emit(event, data);
    if (ENVELOPED_EVENTS.has(event)) room.emit(ENVELOPE_EVENT, { eventName: event, payload: data });
  });
}
