// Stopping generations: abort route, client disconnect, a newer message, a crashed actor host; heartbeats.
// The model is the local chat-completions stand-in, holding its answer open so a stream is surely mid-way.
import t from 'tap';
import type { Test } from 'tap';
import { chunk, heldAnswer, sse, startLlmStandIn, type LlmStandIn } from './oracle-agent-llm-stand-in.js';
import {
  call,
  createSession,
  eventually,
  newUser,
  openStream,
  sseEvents,
  startOracleServer,
  type OracleServer,
  type SseItem,
  type User,
} from './helpers/oracle.js';

async function setup(t: Test, env: Record<string, string> = {}) {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const server = await startOracleServer(t, { env: { LLM_BASE_URL: llm.baseUrl, ...env } });
  const ada = await newUser(server.oracleDid);
  const sessionId = await createSession(server, ada);
  return { llm, server, ada, sessionId };
}

/**
 * Every test but the heartbeat one (a setting of its own) runs on one stand-in and one server, started on the
 * first call (see sharedTestServer): each has its own user and session and scripts the stand-in's answers it then
 * uses up. `requestsBefore`: the stand-in's requests before the test's own.
 */
let shared: Promise<{ llm: LlmStandIn; server: OracleServer }> | undefined;
async function sharedSetup() {
  shared ??= (async () => {
    const llm = await startLlmStandIn();
    t.teardown(() => llm.close());
    return { llm, server: await startOracleServer(t, { env: { LLM_BASE_URL: llm.baseUrl } }) };
  })();
  const { llm, server } = await shared;
  const ada = await newUser(server.oracleDid);
  const sessionId = await createSession(server, ada);
  return { llm, server, ada, sessionId, requestsBefore: llm.requests.length };
}

/** Reads events until one named `name` arrives; returns the events so far and the live iterator. */
async function readUntil(events: AsyncGenerator<SseItem>, name: string, seen: SseItem[] = []): Promise<SseItem[]> {
  for (;;) {
    const next = await events.next();
    if (next.done) throw new Error(`stream ended before a ${name} frame`);
    seen.push(next.value);
    if (next.value.event === name) return seen;
  }
}

async function rest(events: AsyncGenerator<SseItem>, seen: SseItem[]): Promise<SseItem[]> {
  for await (const item of events) seen.push(item);
  return seen;
}

async function messages(server: { url: string }, user: User, id: string): Promise<{ type: string; content: string }[]> {
  return (await call(server, 'GET', `/messages/${id}`, { user })).body.messages;
}

t.test('POST /messages/abort stops a stream mid-way; done still comes last; the partial answer is kept', async (t) => {
  const { llm, server, ada, sessionId } = await sharedSetup();
  const held = heldAnswer('Hello ');
  llm.script(held.responder);
  const events = sseEvents(await openStream(server, ada, sessionId, { message: 'tell me a long story' }));
  const seen = await readUntil(events, 'message');
  t.equal(seen[0].event, 'reasoning', 'the ack came first');

  const abort = await call(server, 'POST', '/messages/abort', { user: ada, body: { sessionId } });
  t.same(abort.body, { success: true });
  await rest(events, seen);
  t.equal(seen.at(-1)!.event, 'done', 'done is last');
  t.notOk(
    seen.some((item) => item.event === 'reasoning' && item.data.isComplete),
    'no completion frame after an abort',
  );
  await held.closed; // the model request was cancelled: generation stopped
  const transcript = await messages(server, ada, sessionId);
  t.same(
    transcript.map((m) => [m.type, m.content]),
    [
      ['human', 'tell me a long story'],
      ['ai', 'Hello '],
    ],
  );
  t.same(
    (await call(server, 'POST', '/messages/abort', { user: ada, body: { sessionId } })).body,
    { success: false },
    'nothing left to abort',
  );
});

t.test(
  'a client that disconnects mid-stream does not stop the generation (the run goes on, re-joinable)',
  async (t) => {
    const { llm, server, ada, sessionId } = await sharedSetup();
    const held = heldAnswer('Partial ');
    llm.script(held.responder);
    const controller = new AbortController();
    const events = sseEvents(await openStream(server, ada, sessionId, { message: 'go on' }, controller.signal));
    await readUntil(events, 'message');
    controller.abort();
    await events.return(undefined).catch(() => undefined);
    // The connection is gone, the model request is not: released, it finishes the answer.
    const run = await eventually(async () => {
      const res = await call(server, 'GET', `/sessions/${sessionId}/run`, { user: ada });
      return res.status === 200 ? res.body.run : undefined;
    }, 'the run in progress');
    t.equal(run.status, 'running');
    held.release();
    const transcript = await eventually(async () => {
      const list = await messages(server, ada, sessionId);
      return list.length === 2 ? list : undefined;
    }, 'the whole turn to be committed');
    t.same(
      transcript.map((m) => [m.type, m.content]),
      [
        ['human', 'go on'],
        ['ai', 'Partial and the rest.'],
      ],
    );

    // The session is usable at once.
    llm.script(sse([chunk({ content: 'Back again.' }, 'stop')]));
    const next = await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: 'hello?' } });
    t.equal(next.body.message.content, 'Back again.');
  },
);

t.test('a newer message aborts the stream in flight', async (t) => {
  const { llm, server, ada, sessionId, requestsBefore } = await sharedSetup();
  const held = heldAnswer('Old ');
  llm.script(held.responder, sse([chunk({ content: 'New answer.' }, 'stop')]));
  const events = sseEvents(await openStream(server, ada, sessionId, { message: 'first question' }));
  const seen = await readUntil(events, 'message');
  const newer = await call(server, 'POST', `/messages/${sessionId}`, {
    user: ada,
    body: { message: 'second question' },
  });
  t.equal(newer.status, 200);
  t.equal(newer.body.message.content, 'New answer.');
  await rest(events, seen);
  t.equal(seen.at(-1)!.event, 'done');
  t.notOk(seen.some((item) => item.event === 'reasoning' && item.data.isComplete));
  await held.closed;
  const transcript = await messages(server, ada, sessionId);
  t.same(
    transcript.map((m) => [m.type, m.content]),
    [
      ['human', 'first question'],
      ['ai', 'Old '],
      ['human', 'second question'],
      ['ai', 'New answer.'],
    ],
  );
  // The second model call saw the interrupted turn in its history.
  t.same(
    llm.requests[requestsBefore + 1].body.messages
      .slice(1)
      .map((m: { role: string; content: string }) => [m.role, m.content]),
    [
      ['user', 'first question'],
      ['assistant', 'Old '],
      ['user', 'second question'],
    ],
  );
});

t.test('heartbeat comments keep a quiet stream alive', async (t) => {
  const { llm, server, ada, sessionId } = await setup(t, { SSE_HEARTBEAT_SECONDS: '1' });
  const held = heldAnswer('Thinking slowly ');
  llm.script(held.responder);
  const events = sseEvents(await openStream(server, ada, sessionId, { message: 'take your time' }));
  const seen = await readUntil(events, ':comment');
  t.equal(seen.at(-1)!.data, 'heartbeat');
  held.release();
  await rest(events, seen);
  t.equal(seen.at(-1)!.event, 'done');
  t.match(
    seen
      .filter((item) => item.event === 'message')
      .map((item) => item.data.content)
      .join(''),
    'Thinking slowly and the rest.',
  );
});

t.test('an actor host killed mid-stream: error then done, and the session stays usable', async (t) => {
  // The last test: the shared server's actor host is killed and restarted, and nothing runs on it after.
  const { llm, server, ada, sessionId } = await sharedSetup();
  llm.script(sse([chunk({ content: 'Kept.' }, 'stop')]));
  await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: 'before the crash' } });

  const held = heldAnswer('Lost ');
  llm.script(held.responder);
  const events = sseEvents(await openStream(server, ada, sessionId, { message: 'during the crash' }));
  const seen = await readUntil(events, 'message');
  await server.runtime.terminateHost(0);
  await rest(events, seen);
  t.equal(seen.at(-2)!.event, 'error');
  t.match(seen.at(-2)!.data.error, /stopped/);
  t.equal(seen.at(-1)!.event, 'done');

  await eventually(() => server.runtime.isHostAlive(0), 'the host to restart');
  llm.script(sse([chunk({ content: 'Still here.' }, 'stop')]));
  const after = await call(server, 'POST', `/messages/${sessionId}`, {
    user: ada,
    body: { message: 'after the crash' },
  });
  t.equal(after.status, 200);
  t.equal(after.body.message.content, 'Still here.');
  const transcript = await messages(server, ada, sessionId);
  t.same(
    transcript.map((m) => m.content),
    ['before the crash', 'Kept.', 'after the crash', 'Still here.'],
    'what was committed survived',
  );
});
