// Attachments of a message (mxcUri or eventId, filename, mimetype, and the SDK's size): stored with the human
// message, listed in both histories (`attachments`, and the first as `attachment`), and given to the agent:
// described in the text for every model, and, for a model that reads images, an image on the user's
// homeserver as an image part (checked at the local OpenAI-compatible stand-in).
import t from 'tap';
import { chunk, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';
import { startOracleServer } from './helpers/oracle.js';
import { historyPage, sdkReadAll, sdkSend, sdkUser, type SdkFrame } from './helpers/sdk-client.js';

const textOf = (frames: SdkFrame[]) =>
  frames
    .filter((f) => f.event === 'message')
    .map((f) => f.data.content)
    .join('');
const createSession = async (url: string, headers: Record<string, string>) =>
  ((await (await fetch(`${url}/sessions`, { method: 'POST', headers })).json()) as { sessionId: string }).sessionId;

const report = { mxcUri: 'mxc://example.org/AbCdEf', filename: 'report.pdf', mimetype: 'application/pdf', size: 2048 };
const photo = { mxcUri: 'mxc://example.org/Photo1', filename: 'cat.png', mimetype: 'image/png', size: 5_300_000 };
const byEvent = { eventId: '$event:example.org', filename: 'notes.txt', mimetype: 'text/plain' };

t.test('the built-in agent: attachments reach it, are stored with the message and listed in the history', async (t) => {
  const server = await startOracleServer(t);
  const ada = await sdkUser(server.oracleDid);
  const sessionId = await createSession(server.url, ada.headers());
  const frames = await sdkReadAll(
    await sdkSend(server.url, ada, sessionId, { message: 'read these', attachments: [report, byEvent] }),
  );
  const answer = textOf(frames);
  t.match(answer, /The user attached 2 files:/, 'the agent was told of both');
  t.match(answer, /report\.pdf \(application\/pdf, 2\.0 KB\): mxc:\/\/example\.org\/AbCdEf/);
  t.match(answer, /notes\.txt \(text\/plain\): chat event \$event:example\.org/);

  const full = (await (await fetch(`${server.url}/messages/${sessionId}`, { headers: ada.headers() })).json()) as {
    messages: any[];
  };
  const [human, ai] = full.messages;
  t.same(human.attachments, [report, byEvent], 'stored as sent, size included');
  t.same(human.attachment, report, 'the first alone too');
  t.equal(human.content, 'read these', 'the text stays what the user wrote');
  t.notOk('attachments' in ai, 'ai items carry none');
  const paged = await historyPage(server.url, ada, sessionId, { limit: 20 });
  t.same(paged.body.messages[0], human, 'the paged history lists the same item');

  for (const [attachment, problem] of [
    [{ filename: 'x', mimetype: 'text/plain' }, /attachments\.0.*needs an mxcUri or an eventId/],
    [{ ...report, size: -1 }, /attachments\.0\.size must be 0 or more/],
    [{ ...report, size: 1.5 }, /attachments\.0\.size must be a whole number/],
  ] as const) {
    const res = await sdkSend(server.url, ada, sessionId, { message: 'bad', attachments: [attachment] });
    t.equal(res.status, 400);
    t.match(((await res.json()) as { message: string[] }).message.join(' '), problem);
  }
});

t.test('an OpenAI-compatible model: described in text; images as image parts when the model reads them', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const models = [
    { id: 'seeing', vision: true },
    { id: 'blind', vision: false },
  ];
  const server = await startOracleServer(t, {
    env: { LLM_BASE_URL: llm.baseUrl, ORACLE_MODELS: JSON.stringify(models) },
  });
  const ada = await sdkUser(server.oracleDid);
  const sessionId = await createSession(server.url, ada.headers());

  llm.script(sse([chunk({ content: 'A cat.' }, 'stop')]));
  await sdkReadAll(
    await sdkSend(server.url, ada, sessionId, {
      message: 'what is this?',
      model: 'seeing',
      homeServer: 'matrix.example.org',
      attachments: [photo, report],
    }),
  );
  const seen = llm.requests.at(-1)!.body.messages.at(-1);
  t.equal(seen.role, 'user');
  t.match(seen.content[0], {
    type: 'text',
    text: /^what is this\?\n\nThe user attached 2 files:\n- cat\.png \(image\/png, 5\.1 MB\): mxc:\/\/example\.org\/Photo1\n- report\.pdf/,
  });
  t.same(
    seen.content.slice(1),
    [
      {
        type: 'image_url',
        image_url: { url: 'https://matrix.example.org/_matrix/media/v3/download/example.org/Photo1' },
      },
    ],
    'the image only, from the homeserver',
  );

  llm.script(sse([chunk({ content: 'Still a cat.' }, 'stop')]));
  await sdkReadAll(await sdkSend(server.url, ada, sessionId, { message: 'and again?', model: 'blind' }));
  const messages = llm.requests.at(-1)!.body.messages;
  const earlier = messages.find(
    (m: { role: string; content: unknown }) => m.role === 'user' && String(m.content).startsWith('what is this?'),
  );
  t.match(
    earlier?.content,
    /^what is this\?\n\nThe user attached 2 files:\n- cat\.png/,
    'a model without vision gets the history with the attachments described as text',
  );
  t.equal(typeof earlier?.content, 'string');
  t.same(messages.at(-1), { role: 'user', content: 'and again?' });
});
