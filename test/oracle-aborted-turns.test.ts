// A turn stopped while it streamed keeps what the user saw: the text so far and the tool call that was running,
// marked: `done` says `status: aborted` with `partialText`, and after a reload the history's ai item has the
// same text, the same status, and the tool call `interrupted` (not `content: ""` and `toolCalls: []`). Driven as
// client SDK 1.4.0 drives it: delegation headers, its Socket.IO handshake, POST /messages/abort.
import t from 'tap';
import { chunk, heldAnswer, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';
import { startOracleServer } from './helpers/oracle.js';
import { SocketIoClient, closeAll } from './helpers/events.js';
import { historyPage, sdkFrames, sdkSend, sdkUser, type SdkFrame } from './helpers/sdk-client.js';

const llm = await startLlmStandIn();
t.teardown(() => llm.close());
const server = await startOracleServer(t, {
  env: { LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'stand-in', BROWSER_TOOL_TIMEOUT_MS: '60000' },
});
const ada = await sdkUser(server.oracleDid);
const getPage = {
  name: 'getPage',
  description: 'Reads the page',
  schema: { $schema: 'http://json-schema.org/draft-07/schema#' },
};

const createSession = async () =>
  (
    (await (await fetch(`${server.url}/sessions`, { method: 'POST', headers: ada.headers() })).json()) as {
      sessionId: string;
    }
  ).sessionId;
const abort = (sessionId: string) =>
  fetch(`${server.url}/messages/abort`, {
    method: 'POST',
    headers: ada.headers(),
    body: JSON.stringify({ sessionId }),
  }).then((res) => res.json());

/** Reads frames until `until` holds for one, then hands back the reader's rest as a promise of all frames. */
async function readUntil(res: Response, until: (frame: SdkFrame) => boolean) {
  const frames: SdkFrame[] = [];
  const iterator = sdkFrames(res);
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error(`stream ended before the awaited frame: ${frames.map((f) => f.event).join(', ')}`);
    frames.push(next.value);
    if (until(next.value)) break;
  }
  const rest = (async () => {
    for await (const frame of { [Symbol.asyncIterator]: () => iterator }) frames.push(frame);
    return frames;
  })();
  return rest;
}

t.test(
  'stopped while a browser tool ran: the text and the call kept, marked, in done and in the history',
  async (t) => {
    const sessionId = await createSession();
    const socket = await SocketIoClient.connect(
      server.url,
      { sessionId, userDid: ada.did },
      { ucanDelegation: ada.delegation },
    );
    closeAll(t, socket);
    const call = [
      { index: 0, id: 'call_page', type: 'function', function: { name: 'getPage', arguments: '{"selector":"h1"}' } },
    ];
    llm.script(
      sse([
        chunk({ content: 'Let me look ' }),
        chunk({ content: 'at the page.' }),
        chunk({ tool_calls: call }),
        chunk({}, 'tool_calls'),
      ]),
    );

    const res = await sdkSend(server.url, ada, sessionId, { message: 'what does the page say?', tools: [getPage] });
    const all = readUntil(res, (frame) => frame.event === 'tool_call' && frame.data.status === 'isRunning');
    await socket.take('browser_tool_call');
    t.same(await abort(sessionId), { success: true });
    const frames = await all;
    t.match(frames.at(-1), {
      event: 'done',
      data: { status: 'aborted', aborted: true, partialText: 'Let me look at the page.' },
    });
    t.same(frames.at(-1)?.data, { status: 'aborted', aborted: true, partialText: 'Let me look at the page.' });

    const page = await historyPage(server.url, ada, sessionId, { limit: 20 });
    const ai = page.body.messages[1];
    t.match(ai, { type: 'ai', content: 'Let me look at the page.', status: 'aborted', aborted: true });
    t.same(
      ai.toolCalls,
      [
        {
          name: 'getPage',
          args: { selector: 'h1' },
          id: 'call_page',
          output: 'Interrupted: the turn was stopped',
          status: 'error',
          interrupted: true,
        },
      ],
      'the call the stream showed running',
    );
    const full = (await (await fetch(`${server.url}/messages/${sessionId}`, { headers: ada.headers() })).json()) as {
      messages: unknown[];
    };
    t.same(full.messages[1], ai, 'GET /messages lists it the same');

    // The next turn's model sees a valid history: the interrupted call answered with why it has no result.
    llm.script(sse([chunk({ content: 'OK.' }, 'stop')]));
    await readUntil(
      await sdkSend(server.url, ada, sessionId, { message: 'never mind' }),
      (frame) => frame.event === 'done',
    );
    const history = llm.requests.at(-1)!.body.messages;
    t.match(
      history.find((m: { role: string }) => m.role === 'tool'),
      { role: 'tool', tool_call_id: 'call_page', content: /stopped/ },
    );
  },
);

t.test('stopped mid-sentence: the partial text is the answer kept', async (t) => {
  const sessionId = await createSession();
  const held = heldAnswer('Half an ');
  llm.script(held.responder);
  const res = await sdkSend(server.url, ada, sessionId, { message: 'tell me a long story' });
  const all = readUntil(res, (frame) => frame.event === 'message');
  await held.running;
  t.same(await abort(sessionId), { success: true });
  const frames = await all;
  t.same(frames.at(-1)?.data, { status: 'aborted', aborted: true, partialText: 'Half an ' });
  const page = await historyPage(server.url, ada, sessionId, { limit: 20 });
  t.match(page.body.messages[1], { content: 'Half an ', toolCalls: [], status: 'aborted', aborted: true });
});

t.test('a turn that finishes says so and carries no partial text', async (t) => {
  const sessionId = await createSession();
  llm.script(sse([chunk({ content: 'All done.' }, 'stop')]));
  const frames = await readUntil(
    await sdkSend(server.url, ada, sessionId, { message: 'hi' }),
    (frame) => frame.event === 'done',
  );
  t.same(frames.at(-1)?.data, { status: 'finished' });
  const page = await historyPage(server.url, ada, sessionId, { limit: 20 });
  t.notOk('status' in page.body.messages[1]);
});
