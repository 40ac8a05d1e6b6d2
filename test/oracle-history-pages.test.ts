// GET /sessions/:id/messages, the paged history SDK 1.4.0 reads before anything else: the newest page first,
// older pages through `prevCursor` (`before`), what was said since through `nextCursor` (`after`). Walked both
// ways, the pages are exactly GET /messages' full transcript; auth and ownership as the other session routes.
import t from 'tap';
import { call, createSession, newUser, startOracleServer } from './helpers/oracle.js';
import { historyPage, sdkReadAll, sdkSend, sdkUser, type HistoryPage } from './helpers/sdk-client.js';

const server = await startOracleServer(t);
const ada = await sdkUser(server.oracleDid);
const bob = await sdkUser(server.oracleDid);
const NOT_FOUND = { statusCode: 404, message: 'Session not found', error: 'Not Found' };

// Sessions made with the SDK's headers (a delegation alone).
const createdBy = async (user: typeof ada) => {
  const res = await fetch(`${server.url}/sessions`, { method: 'POST', headers: user.headers() });
  return ((await res.json()) as { sessionId: string }).sessionId;
};
const sessionId = await createdBy(ada);
const TURNS = 12;
for (let i = 0; i < TURNS; i++) {
  const frames = await sdkReadAll(await sdkSend(server.url, ada, sessionId, { message: `message ${i}` }));
  if (frames.at(-1)?.event !== 'done') throw new Error(`turn ${i} did not end with done`);
}
const full = (await fetch(`${server.url}/messages/${sessionId}`, { headers: ada.headers() }).then((res) =>
  res.json(),
)) as { messages: HistoryPage['messages'] };

const page = async (query: { limit: number; before?: string; after?: string }): Promise<HistoryPage> => {
  const res = await historyPage(server.url, ada, sessionId, query);
  if (res.status !== 200) throw new Error(`history answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as HistoryPage;
};

t.test('the newest page, then older pages until the start: the whole transcript, nothing twice', async (t) => {
  t.equal(full.messages.length, TURNS * 2);
  const newest = await page({ limit: 5 });
  t.same(newest.messages, full.messages.slice(-5), 'the newest five, oldest first, as GET /messages lists them');
  t.match(newest, { hasOlder: true, hasNewer: false });
  t.type(newest.nextCursor, 'string', 'the newest page has a cursor for what is said next');
  // The SDK's useInfiniteQuery: pages newest first, each fetched with the previous page's prevCursor.
  const pages = [newest];
  while (pages.at(-1)!.hasOlder) pages.push(await page({ limit: 5, before: pages.at(-1)!.prevCursor! }));
  t.equal(pages.length, Math.ceil((TURNS * 2) / 5));
  t.same(pages.flatMap((p) => p.messages.map((m) => m.id)).length, TURNS * 2);
  // flattenPages: from the oldest page to the newest.
  t.same(
    [...pages].reverse().flatMap((p) => p.messages),
    full.messages,
    'walked back: exactly the transcript',
  );
  t.equal(pages.at(-1)!.hasOlder, false);
  t.same(pages.at(-1)!.messages[0], full.messages[0]);
});

t.test('from the oldest forwards through nextCursor: the whole transcript', async (t) => {
  const oldest = await page({ limit: 7, after: '0' });
  t.same(oldest.messages, full.messages.slice(0, 7));
  t.match(oldest, { hasOlder: false, hasNewer: true });
  const pages = [oldest];
  while (pages.at(-1)!.hasNewer) pages.push(await page({ limit: 7, after: pages.at(-1)!.nextCursor! }));
  t.same(
    pages.flatMap((p) => p.messages),
    full.messages,
    'walked forward: exactly the transcript',
  );
  const last = pages.at(-1)!;
  const beyond = await page({ limit: 7, after: last.nextCursor! });
  t.same(
    beyond,
    { messages: [], prevCursor: last.nextCursor, nextCursor: last.nextCursor, hasOlder: true, hasNewer: false },
    'nothing newer yet',
  );
});

t.test("the SDK's fetchNewer after a turn: only the new messages follow the newest page's nextCursor", async (t) => {
  const id = await createdBy(ada);
  const empty = await page2(id, { limit: 20 });
  t.same(empty, { messages: [], prevCursor: '0', nextCursor: '0', hasOlder: false, hasNewer: false }, 'a new session');
  await sdkReadAll(await sdkSend(server.url, ada, id, { message: 'first' }));
  const first = await page2(id, { limit: 20, after: empty.nextCursor! });
  t.same(
    first.messages.map((m) => [m.type, m.type === 'human' ? m.content : 'ai']),
    [
      ['human', 'first'],
      ['ai', 'ai'],
    ],
  );
  await sdkReadAll(await sdkSend(server.url, ada, id, { message: 'second' }));
  const second = await page2(id, { limit: 20, after: first.nextCursor! });
  t.same(second.messages.map((m) => m.content).slice(0, 1), ['second'], 'the tail starts at the new message');
  t.equal(second.messages.length, 2);
  t.match(second, { hasOlder: true, hasNewer: false });
});

async function page2(id: string, query: { limit: number; before?: string; after?: string }): Promise<HistoryPage> {
  const res = await historyPage(server.url, ada, id, query);
  if (res.status !== 200) throw new Error(`history answered ${res.status}`);
  return res.body as HistoryPage;
}

t.test('auth and ownership as the other session routes; bad queries are a 400', async (t) => {
  const unauthenticated = await fetch(`${server.url}/sessions/${sessionId}/messages?limit=20`);
  t.equal(unauthenticated.status, 401);
  const foreign = await historyPage(server.url, bob, sessionId, { limit: 20 });
  t.same([foreign.status, foreign.body], [404, NOT_FOUND], "someone else's session");
  const unknown = await historyPage(server.url, ada, '00000000-0000-4000-8000-000000000000', { limit: 20 });
  t.same([unknown.status, unknown.body], [404, NOT_FOUND], 'an unknown id, alike');
  // An invocation user (the other auth path) reads their own sessions' pages too.
  const eve = await newUser(server.oracleDid);
  const eves = await createSession(server, eve);
  const own = await call(server, 'GET', `/sessions/${eves}/messages?limit=20`, { user: eve });
  t.same([own.status, own.body.messages], [200, []]);
  for (const query of ['limit=20&before=4&after=2', 'limit=-1', 'limit=20&before=x', 'limit=20&after=1.5']) {
    const bad = await call(server, 'GET', `/sessions/${sessionId}/messages?${query}`, { headers: ada.headers() });
    t.equal(bad.status, 400, query);
    t.match(bad.body, { statusCode: 400, error: 'Bad Request' });
  }
  const clamped = await page({ limit: 20, before: '100000' });
  t.same(clamped.messages, full.messages.slice(-20), 'a cursor past the end counts from the end');
  const capped = await page({ limit: 1000 });
  t.equal(capped.messages.length, TURNS * 2, 'limit capped at 100 (all 24 here)');
});
