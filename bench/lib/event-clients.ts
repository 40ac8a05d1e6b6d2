// A child process of bench/websocket.ts that holds many event-channel sockets (native `ws` or
// socket.io-client over the websocket transport) and counts the events they receive. Driven over IPC:
//   parent -> { type: 'connect', ... }   child -> { type: 'connected', open, failed, error? }
//   parent -> { type: 'count' }          child -> { type: 'count', events, open }
//   parent -> { type: 'close' }          the child closes its sockets and exits.
import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';

export type ClientTransport = 'ws' | 'socket.io';

export interface ConnectOrder {
  type: 'connect';
  baseUrl: string;
  transport: ClientTransport;
  /** The session id of each socket to open. */
  sessions: string[];
  /** Sent as the handshake's invocation (the baseline ignores it). */
  invocation?: string;
  /** Handshakes in flight at once. */
  concurrency: number;
  /**
   * Loopback source address of the native sockets (e.g. 127.0.0.2): one source address gives at most ~28k
   * connections to one server port (the ephemeral port range), so client processes holding more use one each.
   */
  localAddress?: string;
}

type Order = ConnectOrder | { type: 'count' } | { type: 'close' };

let events = 0;
let open = 0;
const closers: (() => void)[] = [];

function openWs(order: ConnectOrder, sessionId: string): Promise<void> {
  const url = new URL('/ws', order.baseUrl.replace(/^http/, 'ws'));
  url.searchParams.set('sessionId', sessionId);
  if (order.invocation) url.searchParams.set('invocation', order.invocation);
  const socket = new WebSocket(url, { perMessageDeflate: false, localAddress: order.localAddress });
  closers.push(() => socket.terminate());
  return new Promise((resolve, reject) => {
    let connected = false;
    socket.on('message', () => {
      // The first frame is `connected`; every later one is a fanned-out event.
      if (connected) events++;
      else {
        connected = true;
        open++;
        resolve();
      }
    });
    socket.once('close', () => {
      if (connected) open--;
    });
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
  });
}

function openSocketIo(order: ConnectOrder, sessionId: string): Promise<void> {
  const socket: Socket = io(order.baseUrl, {
    transports: ['websocket'],
    query: { sessionId },
    auth: order.invocation ? { invocation: order.invocation } : {},
    reconnection: false,
    forceNew: true,
  });
  closers.push(() => socket.close());
  return new Promise((resolve, reject) => {
    socket.onAny((event: string) => {
      // `oracle_event` repeats some events as envelopes for SDK 1.4.0 (docs/events.md): counted once, as on /ws.
      if (event === 'oracle_event') return;
      if (event !== 'connected') events++;
      else {
        open++;
        resolve();
      }
    });
    socket.once('disconnect', () => open--);
    socket.once('connect_error', reject);
  });
}

async function connectAll(order: ConnectOrder): Promise<{ failed: number; error?: string }> {
  let next = 0;
  let failed = 0;
  let error: string | undefined;
  const opener = order.transport === 'ws' ? openWs : openSocketIo;
  const lane = async () => {
    while (next < order.sessions.length) {
      const sessionId = order.sessions[next++];
      await opener(order, sessionId).catch((e: unknown) => {
        failed++;
        error ??= e instanceof Error ? e.message : String(e);
      });
    }
  };
  await Promise.all(Array.from({ length: order.concurrency }, lane));
  return { failed, error };
}

process.on('message', (order: Order) => {
  if (order.type === 'connect') {
    connectAll(order).then(({ failed, error }) => process.send!({ type: 'connected', open, failed, error }));
  } else if (order.type === 'count') {
    process.send!({ type: 'count', events, open });
  } else {
    for (const close of closers) close();
    setTimeout(() => process.exit(0), 200).unref();
    process.disconnect();
  }
});
