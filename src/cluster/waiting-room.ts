// Thread: main
// What a cluster node answers on its port while it waits for NATS JetStream at start-up (before the
// real front door listens): / (liveness) 200, since the process is alive and waiting is what it should do (a liveness
// probe failing here would restart a node that only waits for NATS, for ever); /health (readiness) 503 with the
// reason; every other request 503 with Retry-After; a USSD step the
// END text a gateway expects (200: a gateway ends the session on any non-2xx). Load balancers and orchestrators thus
// see a node that is starting, not a refused connection, and nobody waits on a request it cannot serve.
import { createServer, type Server } from 'node:http';

export interface WaitingRoom {
  /** What /health says the node waits for. */
  setReason(reason: string): void;
  /** Frees the port (open connections are closed) so the front door can listen on it. */
  close(): Promise<void>;
}

export interface WaitingRoomOptions {
  host: string;
  port: number;
  /** Seconds in Retry-After. */
  retryAfterSeconds?: number;
  /** Plain-text 200 answers by path (the USSD endpoint's END text). */
  plainAnswers?: Record<string, string>;
  environment?: string;
}

/** Seconds in Retry-After unless told otherwise. */
export const WAITING_ROOM_RETRY_AFTER_SECONDS = 5;

/** The waiting room's answer to a request other than `/`, `/health` and a plain answer's path, as docs/errors.md says. */
export const WAITING_ROOM_ANSWER = {
  status: 503,
  meaning: 'Cluster mode: the node waits for NATS JetStream at start-up; every route but / and /health (503 too)',
  body: (reason: string) => ({
    error: 'Service Unavailable',
    message: `The node is starting (${reason}); retry in a moment`,
    statusCode: 503,
  }),
};

/** Listens on host:port; resolves once it does. A port taken by another process is an error (as it would be later). */
export async function openWaitingRoom(options: WaitingRoomOptions): Promise<WaitingRoom> {
  let reason = 'connecting to NATS JetStream';
  const retryAfter = String(options.retryAfterSeconds ?? WAITING_ROOM_RETRY_AFTER_SECONDS);
  const server: Server = createServer((request, response) => {
    // The body is not needed: drain it so the connection can carry the answer.
    request.resume();
    const path = (request.url ?? '/').split('?')[0];
    const read = request.method === 'GET' || request.method === 'HEAD';
    if (path === '/' && read) {
      const body = JSON.stringify({
        status: 'ok',
        message: `Session actor runtime is running (starting: ${reason})`,
        environment: options.environment ?? 'production',
        timestamp: new Date().toISOString(),
      });
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      response.end(request.method === 'HEAD' ? undefined : body);
      return;
    }
    const plain = request.method === 'POST' ? options.plainAnswers?.[path] : undefined;
    if (plain !== undefined) {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': retryAfter }).end(plain);
      return;
    }
    const body =
      path === '/health'
        ? {
            status: 'error',
            environment: options.environment ?? 'production',
            timestamp: new Date().toISOString(),
            uptime: process.uptime(),
            pid: process.pid,
            database: 'disconnected',
            starting: reason,
          }
        : WAITING_ROOM_ANSWER.body(reason);
    response.writeHead(WAITING_ROOM_ANSWER.status, {
      'content-type': 'application/json; charset=utf-8',
      'retry-after': retryAfter,
      connection: 'close',
    });
    response.end(request.method === 'HEAD' ? undefined : JSON.stringify(body));
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    setReason(next) {
      reason = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
