// Thread: main
// WebSocket clients: each journey creates a chat session, opens the native event channel (/ws) on it, holds the
// connection for --ws-hold, pings every --ws-ping (the round trip is a request) and sends --ws-turns chat
// messages whose events (router_update, reasoning, ...) it counts by name.
import WebSocket from 'ws';
import { expectStatus, LoadError, timed } from '../http.js';
import { startChatJourney } from './chat.js';
import { sleep } from './pick.js';
import type { Scenario, ScenarioContext } from './types.js';
import { userPool } from './users.js';

interface Frame {
  event?: string;
}

/** Resolves with the socket once its `connected` event arrives. */
function openSocket(url: URL, timeoutMs: number, onFrame: (frame: Frame) => void): Promise<WebSocket> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new LoadError('timeout', 'no connected event')), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.terminate();
      reject(error);
    };
    socket.on('message', (data) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(data)) as Frame;
      } catch {
        frame = { event: 'not json' };
      }
      if (frame.event === 'connected') {
        clearTimeout(timer);
        resolve(socket);
      }
      onFrame(frame);
    });
    // `on`, not `once`: a socket may report more than one error, and an unheard one would end the process.
    socket.on('error', fail);
    socket.once('unexpected-response', (_req, res) => fail(new LoadError(`ws handshake http ${res.statusCode}`)));
  });
}

export async function wsScenario(ctx: ScenarioContext): Promise<Scenario> {
  const { options, client } = ctx;
  const nextUser = await userPool(options.users, options.oracleDid!);
  return {
    name: 'ws',
    async iterate(scheduledAt) {
      const user = nextUser();
      const { headers, sessionId } = await startChatJourney(ctx, user, scheduledAt);
      const url = new URL('/ws', options.target);
      url.protocol = options.target.protocol === 'https:' ? 'wss:' : 'ws:';
      url.searchParams.set('sessionId', sessionId);
      url.searchParams.set('invocation', await user.invocation());

      let pong: ((error?: Error) => void) | undefined;
      const onFrame = (frame: Frame) => {
        ctx.recorder().count('ws events');
        ctx.recorder().count(`ws event ${frame.event ?? 'unnamed'}`);
        if (frame.event === 'pong') pong?.();
      };
      const since = performance.now();
      const socket = await timed(ctx.recorder(), since, () => openSocket(url, options.timeoutMs, onFrame));
      ctx.recorder().count('ws connections');
      let closed = false;
      socket.once('close', () => {
        closed = true;
        pong?.(new LoadError('ws closed by the server'));
      });
      try {
        const turns = Promise.all(
          Array.from({ length: options.wsTurns }, async () => {
            const sent = performance.now();
            await timed(ctx.recorder(), sent, async () =>
              expectStatus(
                await client.request('POST', `/messages/${sessionId}`, {
                  headers: { ...headers, 'content-type': 'application/json' },
                  body: JSON.stringify({ message: options.message }),
                }),
                200,
                201,
              ),
            );
          }),
        );
        turns.catch(() => undefined); // awaited below; a failure must not be unhandled meanwhile
        const holdUntil = performance.now() + options.wsHoldMs;
        while (performance.now() < holdUntil) {
          if (closed) throw new LoadError('ws closed by the server');
          const sent = performance.now();
          await timed(
            ctx.recorder(),
            sent,
            () =>
              new Promise<void>((resolve, reject) => {
                const timer = setTimeout(() => reject(new LoadError('ws pong timeout')), options.timeoutMs);
                pong = (error) => {
                  clearTimeout(timer);
                  if (error) reject(error);
                  else resolve();
                };
                socket.send(JSON.stringify({ event: 'ping' }));
              }),
          );
          await sleep(Math.min(options.wsPingMs - (performance.now() - sent), holdUntil - performance.now()));
        }
        await turns;
      } finally {
        socket.close(1000);
      }
    },
  };
}
