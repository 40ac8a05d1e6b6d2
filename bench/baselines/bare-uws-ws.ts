// The ceiling for idle WebSockets: a bare uWebSockets.js app accepting any WebSocket upgrade, sending one
// `connected` frame (what the event clients wait for) and nothing else; same idle timeout as the oracle's
// default. No auth, no sessions, no pub/sub. Prints LISTENING <port>.
import uWS from 'uWebSockets.js';

uWS
  .App()
  .ws('/*', {
    idleTimeout: 60,
    open: (ws) => void ws.send('{"type":"connected"}'),
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) process.exit(1);
    console.log(`LISTENING ${uWS.us_socket_local_port(socket)}`);
  });
process.on('SIGTERM', () => process.exit(0));
