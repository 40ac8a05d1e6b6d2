// Thread: main
// Chat: each journey creates a session and sends --turns streamed messages, reading each SSE stream to `done`;
// it records the time to the first frame and to `done` besides the requests' latency.
import { createParser } from 'eventsource-parser';
import { expectStatus, LoadError, timed, type HttpClient } from '../http.js';
import type { Recorder } from '../recorder.js';
import { sleep, thinkTime } from './pick.js';
import type { Scenario, ScenarioContext } from './types.js';
import { userPool, type LoadUser } from './users.js';

async function createChatSession(client: HttpClient, headers: Record<string, string>): Promise<string> {
  const answer = expectStatus(await client.request('POST', '/sessions', { headers }), 201);
  const sessionId = (JSON.parse(answer.body) as { sessionId?: unknown }).sessionId;
  if (typeof sessionId !== 'string') throw new LoadError('chat session without id');
  return sessionId;
}

/** A journey's first request: the user creates a chat session (latency from `scheduledAt`). */
export async function startChatJourney(
  ctx: ScenarioContext,
  user: LoadUser,
  scheduledAt: number,
): Promise<{ headers: Record<string, string>; sessionId: string }> {
  const headers = { ...ctx.options.headers, ...(await user.headers()) };
  const sessionId = await timed(ctx.recorder(), scheduledAt, () => createChatSession(ctx.client, headers));
  return { headers, sessionId };
}

/** One streamed message read to `done`; `since` is when it was sent. */
async function streamTurn(
  client: HttpClient,
  recorder: Recorder,
  sessionId: string,
  headers: Record<string, string>,
  message: string,
  since: number,
): Promise<void> {
  let first = false;
  let done = false;
  let errorFrame: string | undefined;
  const parser = createParser({
    onEvent(event) {
      if (!first) {
        first = true;
        recorder.timing('chat first frame', performance.now() - since);
      }
      recorder.count('chat frames');
      if (event.event === 'error') errorFrame = event.data;
      if (event.event === 'done') {
        done = true;
        recorder.timing('chat done', performance.now() - since);
      }
    },
  });
  const answer = await client.request('POST', `/messages/${sessionId}`, {
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ message, stream: true }),
    onChunk: (chunk) => parser.feed(chunk),
  });
  expectStatus(answer, 200);
  if (errorFrame !== undefined) throw new LoadError('chat error frame', errorFrame);
  if (!done) throw new LoadError('chat stream ended without done');
}

export async function chatScenario(ctx: ScenarioContext): Promise<Scenario> {
  const { options, client } = ctx;
  const nextUser = await userPool(options.users, options.oracleDid!);
  return {
    name: 'chat',
    async iterate(scheduledAt) {
      const { headers, sessionId } = await startChatJourney(ctx, nextUser(), scheduledAt);
      for (let turn = 0; turn < options.turns; turn++) {
        if (turn > 0) await sleep(thinkTime(options.thinkMs));
        const since = performance.now();
        await timed(ctx.recorder(), since, () =>
          streamTurn(client, ctx.recorder(), sessionId, headers, options.message, since),
        );
        ctx.recorder().count('chat turns');
      }
    },
  };
}
