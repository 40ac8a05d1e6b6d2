// Runs that survive a dropped connection, driven as client SDK 1.4.0 drives them: the stream's answer carries
// `x-run-id`, a `run` frame comes first, frames are numbered by SSE `id:` lines; the connection drops mid-turn, the
// turn goes on, GET /sessions/:id/run names it, and GET /runs/:runId?after=<last id> re-joins: what came after,
// then live frames until `done`, with no frame missing or repeated, under the same X-Request-Id. Bounds: the
// frames a run keeps, and how long an ended run stays.
import t from 'tap';
import type { ServerResponse } from 'node:http';
import { chunk, startLlmStandIn } from './oracle-agent-llm-stand-in.js';
import { startOracleServer } from './helpers/oracle.js';
import { sdkFrames, sdkSend, sdkUser, type SdkFrame } from './helpers/sdk-client.js';
import { RunRegistry } from '../dist/src/oracle/runs/registry.js';
import { toBatch } from '../dist/src/oracle/frame-batch.js';
import type { SseFrame } from '../dist/src/oracle/sse-frames.js';

/** A model answer sent in parts, each after the previous `next()`; the first at once. */
function gatedAnswer(parts: string[]) {
  const gates: (() => void)[] = [];
  const opened = parts.map(() => new Promise<void>((resolve) => gates.push(resolve)));
  gates[0]();
  let step = 1;
  const responder = async (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const [i, part] of parts.entries()) {
      await opened[i];
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(chunk({ content: part }, i === parts.length - 1 ? 'stop' : null))}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  };
  return { responder, next: () => gates[step++]?.() };
}

const llm = await startLlmStandIn();
t.teardown(() => llm.close());
const server = await startOracleServer(t, {
  env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'stand-in', SSE_HEARTBEAT_SECONDS: '1' },
});
const ada = await sdkUser(server.oracleDid);
const bob = await sdkUser(server.oracleDid);
const createSession = async () =>
  (
    (await (await fetch(`${server.url}/sessions`, { method: 'POST', headers: ada.headers() })).json()) as {
      sessionId: string;
    }
  ).sessionId;
const join = (runId: string, after: number, user = ada) =>
  fetch(`${server.url}/runs/${encodeURIComponent(runId)}?after=${after}`, { headers: user.headers() });
const ids = (frames: SdkFrame[]) => frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
const textOf = (frames: SdkFrame[]) =>
  frames
    .filter((f) => f.event === 'message')
    .map((f) => f.data.content)
    .join('');

async function readUntil(
  iterator: AsyncGenerator<SdkFrame>,
  until: (frame: SdkFrame) => boolean,
  frames: SdkFrame[] = [],
): Promise<SdkFrame[]> {
  for (;;) {
    const next = await iterator.next();
    if (next.done) return frames;
    frames.push(next.value);
    if (until(next.value)) return frames;
  }
}

t.test('a stream dropped mid-turn, re-joined: every frame once, in order, and the turn completed', async (t) => {
  const sessionId = await createSession();
  const answer = gatedAnswer(['One. ', 'Two. ', 'Three. ', 'Four.']);
  llm.script(answer.responder);
  const controller = new AbortController();
  const res = await sdkSend(server.url, ada, sessionId, { message: 'count to four' }, controller.signal);
  const runId = res.headers.get('x-run-id')!;
  const requestId = res.headers.get('x-request-id');
  t.ok(runId, 'the answer names its run');
  const first = sdkFrames(res);
  const before = await readUntil(first, (frame) => frame.event === 'message');
  t.same(
    before[0],
    { event: 'run', data: { runId, requestId, resumed: false, partialLength: 0, status: 'running' } },
    'the run frame first, not numbered',
  );
  t.same(ids(before), [1, 2], 'the ack and the first delta, numbered from 1');
  controller.abort(); // the phone lost its connection
  await first.return(undefined).catch(() => undefined);
  const lastId = Math.max(...ids(before));

  // The turn goes on without a reader.
  answer.next();
  const running = await (await fetch(`${server.url}/sessions/${sessionId}/run`, { headers: ada.headers() })).json();
  t.same(running, { run: { runId, status: 'running' } });
  t.same(
    await (await fetch(`${server.url}/sessions/${sessionId}/run`, { headers: bob.headers() })).json(),
    { statusCode: 404, message: 'No run in progress', error: 'Not Found' },
    "another user's view of it: none",
  );
  t.equal((await join(runId, 0, bob)).status, 404, 'nor can they re-join it');

  const rejoined = await join(runId, lastId);
  t.equal(rejoined.status, 200);
  t.equal(rejoined.headers.get('x-request-id'), requestId, 'the same answer id: the client adds to the same message');
  t.equal(rejoined.headers.get('x-run-id'), runId);
  const second = sdkFrames(rejoined);
  const resumedStart = await readUntil(second, (frame) => frame.event === 'message');
  t.match(resumedStart[0], { event: 'run', data: { runId, resumed: false, status: 'running' } });
  answer.next();
  answer.next();
  const after = await readUntil(second, (frame) => frame.event === 'done', resumedStart);
  const all = [...before, ...after];
  const numbered = ids(all);
  t.same(
    numbered,
    numbered.map((_, i) => i + 1),
    `frames 1..${numbered.length}, none missing or repeated`,
  );
  t.equal(textOf(all), 'One. Two. Three. Four.', 'the whole answer across both connections');
  t.same(all.at(-1), { event: 'done', data: { status: 'finished' }, id: String(numbered.at(-1)) });

  const transcript = (await (
    await fetch(`${server.url}/messages/${sessionId}`, { headers: ada.headers() })
  ).json()) as { messages: { content: string }[] };
  t.equal(transcript.messages[1].content, 'One. Two. Three. Four.', 'committed whole');
  t.same(
    (
      (await (await fetch(`${server.url}/sessions/${sessionId}/run`, { headers: ada.headers() })).json()) as {
        statusCode: number;
      }
    ).statusCode,
    404,
    'no run in progress now',
  );

  // An ended run replays whole (the SDK's resumeRun after a reload asks from 0), then ends.
  const replay = await readUntil(sdkFrames(await join(runId, 0)), () => false);
  t.same(ids(replay), numbered);
  t.equal(textOf(replay), 'One. Two. Three. Four.');
  const tail = await readUntil(sdkFrames(await join(runId, numbered.at(-1)!)), () => false);
  t.same(
    tail.map((f) => f.event),
    ['run'],
    'nothing after the last frame',
  );
  const unknown = await join('no-such-run', 0);
  t.same(
    [unknown.status, await unknown.json()],
    [404, { statusCode: 404, message: 'Run not found', error: 'Not Found' }],
  );
  const bad = await join(runId, -1);
  t.equal(bad.status, 400);
});

t.test('abort stays explicit: POST /messages/abort ends a run no one reads; a re-join sees it stopped', async (t) => {
  const sessionId = await createSession();
  const answer = gatedAnswer(['Start ', 'never sent']);
  llm.script(answer.responder);
  const controller = new AbortController();
  const res = await sdkSend(server.url, ada, sessionId, { message: 'go' }, controller.signal);
  const runId = res.headers.get('x-run-id')!;
  const first = sdkFrames(res);
  await readUntil(first, (frame) => frame.event === 'message');
  controller.abort();
  await first.return(undefined).catch(() => undefined);
  const stop = await fetch(`${server.url}/messages/abort`, {
    method: 'POST',
    headers: ada.headers(),
    body: JSON.stringify({ sessionId }),
  });
  t.same(await stop.json(), { success: true }, 'the run was still going');
  const frames = await readUntil(sdkFrames(await join(runId, 0)), () => false);
  t.same(frames.at(-1)?.data, { status: 'aborted', aborted: true, partialText: 'Start ' });
  t.match(frames[0], { event: 'run', data: { runId } });
});

t.test(
  'bounds: a run keeps at most its byte budget (older frames refused), an ended run only for its retention',
  async (t) => {
    const registry = new RunRegistry({ maxBytes: 400, retentionMs: 50, totalBytes: 10_000 });
    t.teardown(() => registry.stop());
    const run = registry.start({ runId: 'r1', sessionId: 's1', userDid: 'did:key:ada', requestId: 'q1' });
    const frame = (i: number): SseFrame => ({ event: 'message', data: { content: `delta ${i}` } });
    for (let i = 0; i < 20; i++) run.sink.frames(toBatch(i + 1, [frame(i)]));
    t.ok(run.bytes <= 400, `kept ${run.bytes} bytes`);
    t.equal(run.nextId, 21);
    t.equal(run.framesAfter(0), undefined, 'the first frames are gone: a re-join from 0 is refused');
    t.match(run.framesAfter(19), /^id: 20\nevent: message\ndata: \{"content":"delta 19"\}\n\n$/);
    t.equal(registry.get('r1', 'did:key:bob'), undefined, "someone else's run is not found");
    run.sink.frames(toBatch(21, [{ event: 'done', data: { status: 'finished' } }]));
    run.sink.end('finished');
    t.equal(run.status, 'finished');
    t.equal(registry.get('r1', 'did:key:ada'), run);
    await new Promise((resolve) => setTimeout(resolve, 80));
    t.equal(registry.get('r1', 'did:key:ada'), undefined, 'forgotten after its retention');

    const small = new RunRegistry({ maxBytes: 1000, retentionMs: 60_000, totalBytes: 1200 });
    t.teardown(() => small.stop());
    const ended = small.start({ runId: 'a', sessionId: 's', userDid: 'u', requestId: 'q' });
    for (let i = 0; i < 10; i++) ended.sink.frames(toBatch(i + 1, [frame(i)]));
    ended.sink.end('finished');
    const live = small.start({ runId: 'b', sessionId: 's2', userDid: 'u', requestId: 'q' });
    for (let i = 0; i < 20; i++) live.sink.frames(toBatch(i + 1, [frame(i)]));
    t.equal(small.get('a', 'u'), undefined, 'past the total, the ended run is forgotten first');
    t.equal(small.get('b', 'u'), live);
    t.ok(small.size.bytes <= 1200, `${small.size.bytes} bytes kept in all`);
  },
);
