// The ceiling for SSE: a bare uWebSockets.js app that reads a POST body and answers an SSE stream of
// FRAMES frames of FRAME_BYTES bytes, one write each, yielding to the event loop between frames (as the
// built-in agent does), `done` last. No auth, no actors, no storage. Prints LISTENING <port>.
import uWS from 'uWebSockets.js';

const FRAMES = Number(process.env.FRAMES ?? 40);
const FRAME_BYTES = Number(process.env.FRAME_BYTES ?? 120);
const shape = (content: string) =>
  `event: message\ndata: {"content":"${content}","timestamp":"${new Date().toISOString()}"}\n\n`;
const frame = shape('x'.repeat(Math.max(1, FRAME_BYTES - shape('').length)));
const done = 'event: done\ndata: {}\n\n';
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function stream(res: uWS.HttpResponse, state: { aborted: boolean }) {
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', 'text/event-stream');
    res.writeHeader('Cache-Control', 'no-cache, no-transform');
  });
  for (let i = 0; i < FRAMES - 1; i++) {
    await tick();
    if (state.aborted) return;
    res.cork(() => res.write(frame));
  }
  if (!state.aborted) res.cork(() => res.end(done));
}

uWS
  .App()
  .post('/*', (res) => {
    const state = { aborted: false };
    res.onAborted(() => (state.aborted = true));
    res.onData((_chunk, isLast) => {
      if (isLast) void stream(res, state);
    });
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) process.exit(1);
    console.log(`LISTENING ${uWS.us_socket_local_port(socket)}`);
  });
process.on('SIGTERM', () => process.exit(0));
