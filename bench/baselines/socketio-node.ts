// Baseline for bench/websocket.ts: Socket.IO on a plain node:http server. A socket joins the room named by
// its `sessionId` query (no authentication: less work than the oracle does). `POST /emit/<room>` emits the
// seven events a chat turn with one tool call produces on the oracle (same names, payloads of the same
// shape), then answers 200: the same trigger and the same fan-out as the oracle's POST /messages.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from 'socket.io';

function turnEvents(sessionId: string): [string, Record<string, unknown>][] {
  const requestId = randomUUID();
  const eventId = `call_${randomUUID()}`;
  const at = () => new Date().toISOString();
  const tool = {
    requestId,
    sessionId,
    toolName: 'toolCall',
    args: { userName: 'Bench', toolName: 'set_user_preferences' },
    eventId,
  };
  return [
    ['router_update', { sessionId, requestId, step: 'agent', timestamp: at() }],
    [
      'reasoning',
      {
        sessionId,
        requestId,
        reasoning: 'The user asked to change preferences: userName.',
        reasoningDetails: [{ type: 'thinking', text: 'The user asked to change preferences: userName.' }],
        isComplete: false,
        timestamp: at(),
      },
    ],
    ['router_update', { sessionId, requestId, step: 'tools', timestamp: at() }],
    ['tool_call', { ...tool, status: 'isRunning' }],
    ['tool_call', { ...tool, status: 'done', output: '{"saved":true,"preferences":{"userName":"Bench"}}' }],
    ['router_update', { sessionId, requestId, step: 'agent', timestamp: at() }],
    ['message_cache_invalidation', { sessionId, requestId, status: 'done', timestamp: at() }],
  ];
}

const http = createServer((req, res) => {
  const match = /^\/emit\/([^/?]+)/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) {
    res.writeHead(404).end();
    return;
  }
  req.resume();
  req.on('end', () => {
    const room = decodeURIComponent(match[1]);
    for (const [event, data] of turnEvents(room)) io.to(room).emit(event, data);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});

const io = new Server(http, { serveClient: false, maxHttpBufferSize: 1_000_000 });
io.on('connection', (socket) => {
  const sessionId = String(socket.handshake.query.sessionId ?? '');
  void socket.join(sessionId);
  socket.emit('connected', { message: 'Connected successfully', sessionId, timestamp: new Date().toISOString() });
  socket.on('ping', () => socket.emit('pong', { timestamp: new Date().toISOString(), sessionId }));
});

http.listen(0, '127.0.0.1', () => {
  const address = http.address();
  console.log(`LISTENING ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => {
  io.close();
  process.exit(0);
});
