// The bounds per user on the chat (issue 46): a cap on the sessions one user holds (409 past it), on one
// transcript's bytes (413 for a message that would pass it, nothing of it stored, also when only its answer would),
// and on what one read of GET /messages holds: the answer is streamed, so four reads at once of the largest
// transcript allowed cost the server less memory than the four answers, and each is byte for byte the
// transcript the paged route gives. Other users are unaffected throughout. One server (its own process, so its
// memory is its own) for the whole file.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { startChildServer } from './helpers/child-server.js';
import { call, newUser, readSse, type User } from './helpers/oracle.js';

const SESSIONS_MAX = 3;
const TRANSCRIPT_MAX = 12 * 1024 * 1024;
const oracleKey = await generateKey();
const server = await startChildServer(t, {
  ORACLE_PRIVATE_KEY: formatKey(oracleKey),
  ORACLE_NAME: 'Bounds Oracle',
  ACTOR_THREADS: '1',
  CHAT_SESSIONS_PER_USER_MAX: String(SESSIONS_MAX),
  CHAT_TRANSCRIPT_MAX_BYTES: String(TRANSCRIPT_MAX),
});
const [ada, bob] = await Promise.all([newUser(oracleKey.did()), newUser(oracleKey.did())]);

const create = (user: User) => call(server, 'POST', '/sessions', { user });
const send = (user: User, sessionId: string, message: string) =>
  call(server, 'POST', `/messages/${sessionId}`, { user, body: { message } });
/** The whole transcript through the paged route (SDK 1.4.0's), oldest first. */
const paged = async (user: User, sessionId: string) => {
  const messages: unknown[] = [];
  for (let after = '0'; ; ) {
    const page = await call(server, 'GET', `/sessions/${sessionId}/messages?limit=100&after=${after}`, { user });
    if (page.status !== 200) throw new Error(`paged history answered ${page.status}`);
    messages.push(...page.body.messages);
    if (!page.body.hasNewer) return messages;
    after = page.body.nextCursor;
  }
};

/** The largest message allowed (100,000 UTF-16 units), with characters of 1 to 4 UTF-8 bytes and JSON escapes. */
const LARGEST = 'plain ascii "quoted" \\ é ß 中文 😀 new\nline '.repeat(2_500).slice(0, 100_000);

// Ada's first session is filled to its bound; her others stay small.
const big = (await create(ada)).body.sessionId as string;
let refused: { status: number; body: any } | undefined;
for (let turn = 0; turn < 200 && !refused; turn++) {
  const answer = await send(ada, big, LARGEST);
  if (answer.status === 413) refused = answer;
  else if (answer.status !== 200) throw new Error(`turn ${turn} answered ${answer.status}`);
}

t.test(
  'past the sessions cap: a clear 409, nothing created; other users unaffected; a deletion frees a place',
  async (t) => {
    const more = [await create(ada), await create(ada)];
    t.same(
      more.map((res) => res.status),
      [201, 201],
    );
    const over = await create(ada);
    t.equal(over.status, 409);
    t.match(over.body, {
      statusCode: 409,
      error: 'Conflict',
      message: `Session limit reached: a user may hold at most ${SESSIONS_MAX} chat sessions; delete one (DELETE /sessions/:sessionId) to create another`,
      limit: SESSIONS_MAX,
    });
    t.equal((await call(server, 'GET', '/sessions', { user: ada })).body.total, SESSIONS_MAX, 'nothing was created');
    t.equal((await create(bob)).status, 201, 'another user creates sessions as before');
    const gone = more[1].body.sessionId;
    t.equal((await call(server, 'DELETE', `/sessions/${gone}`, { user: ada })).status, 200);
    t.equal((await create(ada)).status, 201, 'the freed place');
    t.equal((await create(ada)).status, 409);
  },
);

t.test("a message past the transcript's bytes: 413, nothing of it stored; the session still reads", async (t) => {
  if (!refused) throw new Error('the transcript never filled');
  const { limit } = refused.body;
  let { used } = refused.body;
  t.match(refused.body, { statusCode: 413, error: 'Payload Too Large', limit: TRANSCRIPT_MAX });
  t.match(refused.body.message, /^This session's transcript is full: the message would take it past 12582912 bytes/);
  t.ok(used <= limit && used > limit - 400_000, `filled to within a turn of its bound (${used} of ${limit})`);
  const before = await paged(ada, big);

  // A message that fits while its answer (the built-in agent repeats it) does not: refused when it is committed,
  // after the stream opened, with an error frame; nothing of the turn stays.
  const room = limit - used;
  t.ok(room > 1_000, `room left for a message alone (${room} bytes)`);
  const frames = await readSse(
    await fetch(`${server.url}/messages/${big}`, {
      method: 'POST',
      headers: { ...ada.headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'x'.repeat(Math.min(100_000, room - 500)), stream: true }),
    }),
  );
  t.match(
    frames.find((frame) => frame.event === 'error')?.data,
    { error: /^This session's transcript is full/ },
    'the stream says why',
  );
  t.equal(frames.at(-1)?.event, 'done');
  t.same(await paged(ada, big), before, 'the transcript is as it was');

  // Filled closer with smaller turns, the largest message alone no longer fits: refused before anything runs,
  // a JSON 413 even for a stream (the check comes before it opens).
  for (let left = room; left > 4_000; ) {
    const answer = await send(ada, big, 'y'.repeat(Math.floor((left - 2_000) / 3.5)));
    if (answer.status !== 200) throw new Error(`a filling turn answered ${answer.status}`);
    const probe = await send(ada, big, LARGEST);
    if (probe.status !== 413) throw new Error(`the probe answered ${probe.status}`);
    used = probe.body.used;
    left = limit - used;
  }
  const length = (await paged(ada, big)).length;
  const streamed = await fetch(`${server.url}/messages/${big}`, {
    method: 'POST',
    headers: { ...ada.headers(), 'content-type': 'application/json' },
    body: JSON.stringify({ message: LARGEST, stream: true }),
  });
  t.equal(streamed.status, 413);
  t.equal(streamed.headers.get('content-type'), 'application/json; charset=utf-8');
  t.match(await streamed.json(), { statusCode: 413, used, limit });
  t.equal((await paged(ada, big)).length, length, 'nothing of it stored');

  const small = (await call(server, 'GET', '/sessions', { user: bob })).body.sessions[0].sessionId;
  t.equal((await send(bob, small, LARGEST)).status, 200, "another user's session takes messages as before");
});

t.test(
  'four reads at once of the largest transcript: streamed, memory below the four answers, each byte-equal',
  async (t) => {
    const expected = JSON.stringify({ messages: await paged(ada, big) });
    const read = () => fetch(`${server.url}/messages/${big}`, { headers: ada.headers() }).then((res) => res.text());
    t.equal(await read(), expected, 'one read: the paged transcript, byte for byte');
    const anonymous = () =>
      Number(/RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) * 1024;
    const baseline = anonymous();
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, anonymous())), 5);
    const started = performance.now();
    const answers = await Promise.all([read(), read(), read(), read()]);
    const ms = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, anonymous());
    const size = Buffer.byteLength(expected);
    const growth = peak - baseline;
    t.comment(
      `answer ${(size / 1e6).toFixed(1)} MB; 4 reads in ${ms.toFixed(0)} ms; server RSS (anonymous) +${(growth / 1e6).toFixed(1)} MB`,
    );
    t.ok(size > TRANSCRIPT_MAX / 2, 'a large answer');
    for (const answer of answers) t.equal(answer.length, expected.length);
    t.ok(
      answers.every((answer) => answer === expected),
      'every answer is the paged transcript, byte for byte',
    );
    // Building each answer whole held four answers at least (+219 MB measured here); streamed, what grows is the
    // garbage of the parts in flight, collected as they go (+12..23 MB measured), below the four answers themselves.
    t.ok(growth < 4 * size, `server memory grew by ${growth} bytes, less than the four answers (${4 * size})`);
  },
);

t.test('an unknown or foreign session: the JSON 404 before any answer starts', async (t) => {
  const foreign = await call(server, 'GET', `/messages/${big}`, { user: bob });
  t.match(foreign, { status: 404, body: { statusCode: 404, message: 'Session not found', error: 'Not Found' } });
  const empty = (await create(bob)).body.sessionId;
  const none = await call(server, 'GET', `/messages/${empty}`, { user: bob });
  t.match(none, { status: 200, body: { messages: [] } });
  t.equal(none.headers.get('content-type'), 'application/json; charset=utf-8');
});
