// The ceiling: a bare uWebSockets.js app that reads the body and answers a fixed text. Prints LISTENING <port>.
import uWS from 'uWebSockets.js';

const FIXED = 'CON Welcome\n1. Know More\n2. Account Menu\n*. Exit';
uWS
  .App()
  .post('/*', (res) => {
    res.onAborted(() => undefined);
    res.onData((_chunk, isLast) => {
      if (isLast) res.cork(() => res.writeHeader('Content-Type', 'text/plain; charset=utf-8').end(FIXED));
    });
  })
  .get('/*', (res) => {
    res.cork(() => res.writeHeader('Content-Type', 'application/json').end('{"status":"ok"}'));
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) process.exit(1);
    console.log(`LISTENING ${uWS.us_socket_local_port(socket)}`);
  });
process.on('SIGTERM', () => process.exit(0));
