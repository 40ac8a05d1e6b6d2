// @ixo/oracles-client-sdk 1.4.0's own useChat hook (under react-test-renderer) against three real server processes
// in cluster mode on a real 3-server NATS JetStream cluster: a turn streamed through node B runs on node A (its
// session's partition is A's); A is killed with SIGKILL while the model is half-way through its answer. The SDK,
// left to itself, re-joins the run through B; the partition's new owner takes the turn over (the run goes
// `recovering`, the model is asked again) and the hook ends with the whole new answer shown, no error, and exactly
// one answer stored. Then a turn whose client went away for good: the node that inherits the dead node's partition
// takes it over on its own, with nobody re-joining, and stores its one answer.
import { useChat } from '@ixo/oracles-client-sdk';
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { DEFAULT_PARTITIONS, partitionOf } from '../dist/src/cluster/partition-leases.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { parseKey } from '../dist/src/oracle/auth/mint.js';
import { startTestNodes, until, type LocalNode } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { sdkFrames, sdkSend, sdkUser, type SdkUser } from './helpers/sdk-client.js';
import { mountHook, onlyTo } from './helpers/sdk-hooks.js';
import { chunk, heldAnswer, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';

t.setTimeout(180_000);
const llm = await startLlmStandIn();
t.teardown(() => llm.close());
const nats = await startTestNatsCluster(t);
const cluster = await startTestNodes(t, nats, {
  env: {
    LOG_LEVEL: 'warn',
    LLM_BASE_URL: llm.baseUrl,
    LLM_MODEL: 'stand-in',
    SSE_HEARTBEAT_SECONDS: '1',
    RATE_LIMIT_MAX: '100000',
  },
});
const [nodeA, nodeB, nodeC] = cluster.nodes;
const oracleDid = parseKey(cluster.keys.ORACLE_PRIVATE_KEY).did();
// Every node is on loopback: the SDK's fetches may reach them, nothing else.
const fetched = onlyTo(t, 'http://127.0.0.1:');

const observer = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'sar' }, 'test-observer');
t.teardown(() => observer.close());
const leases = await KvRecordStore.open<{ owner?: string | null }>(observer, { name: 'leases' });
const ownerOf = async (sessionId: string) =>
  (await leases.get(['partition', String(partitionOf(sessionId, DEFAULT_PARTITIONS))]))?.value.owner;

interface Shown {
  id: string;
  type: string;
  content: unknown;
}
const UI_COMPONENTS = { ToolCall: () => null, Error: () => null };
/** The text the hook shows for a message (with uiComponents an answer is its text beside its components). */
const textOf = (message: Shown | undefined): string =>
  typeof message?.content === 'string'
    ? message.content
    : Array.isArray(message?.content)
      ? message.content.filter((part) => typeof part === 'string').join('')
      : '';

/** A session of `user`, created through `via`, whose partition `owner` holds; undefined after 30 tries. */
async function sessionOn(owner: LocalNode, user: SdkUser, via: LocalNode): Promise<string | undefined> {
  for (let i = 0; i < 30; i++) {
    const res = await fetch(`${via.url}/sessions`, { method: 'POST', headers: user.headers() });
    const created = ((await res.json()) as { sessionId: string }).sessionId;
    if ((await ownerOf(created)) === owner.nodeId) return created;
  }
  return undefined;
}
const storedOf = async (via: LocalNode, user: SdkUser, sessionId: string) => {
  const res = await fetch(`${via.url}/messages/${sessionId}`, { headers: user.headers() });
  const { messages } = (await res.json()) as { messages: { type: string; content: string }[] };
  return messages.map((m) => [m.type, m.content]);
};

t.test('kill -9 of the node streaming a turn: the SDK re-joins and shows the whole answer', async (t) => {
  const ada = await sdkUser(oracleDid);
  const sessionId = await sessionOn(nodeA, ada, nodeB);
  t.ok(sessionId, "a session on A's partitions");
  if (!sessionId) return;

  // The first attempt streams half an answer and hangs there; the takeover's attempt gets the whole one.
  const cut = heldAnswer('Half an answer, ');
  const WHOLE = 'The whole answer, told once.';
  llm.script(cut.responder, sse([chunk({ content: 'The whole answer, ' }), chunk({ content: 'told once.' }, 'stop')]));

  const props = {
    oracleDid,
    sessionId,
    overrides: { baseUrl: nodeB.url },
    uiComponents: UI_COMPONENTS,
    onPaymentRequiredError: () => undefined,
  };
  const chat = mountHook(t, ada, () => useChat(props));
  await chat.until((c) => c.isRealTimeConnected && !c.isLoading, 'its socket connected and the history loaded');
  const before = fetched.length;
  const sending = chat.current.sendMessage('Tell me everything');
  await chat.until(
    (c) => c.messages.some((m: Shown) => m.type === 'ai' && textOf(m).includes('Half an answer')),
    'the first half of the answer',
    30_000,
  );

  // Every answer text the hook shows from here: the cut one must be dropped, never shown glued to the new one.
  const shownTexts = new Set<string>();
  chat.watch((c) => {
    for (const m of c.messages as Shown[]) if (m.type === 'ai') shownTexts.add(textOf(m));
  });
  const killedAt = performance.now();
  await nodeA.kill();
  const settled = await chat.until((c) => c.run?.ended != null && c.status === 'ready', 'the turn settled', 120_000);
  const settledMs = performance.now() - killedAt;
  await sending;
  t.equal(settled.run.ended, 'done', 'the run ended with done, as the SDK reads it');
  t.equal(settled.run.resumed, 1, 'once resumed: the `recovering` frame of the takeover');
  t.notOk(settled.error, 'no error shown');
  t.notOk(settled.sendMessageError, 'nor a failed send');
  const shown = await chat.until(
    (c) => textOf(c.messages.filter((m: Shown) => m.type === 'ai').at(-1)) === WHOLE,
    'the whole new answer (the cut one dropped)',
  );
  t.same(
    shown.messages.map((m: Shown) => [m.type, textOf(m)]),
    [
      ['human', 'Tell me everything'],
      ['ai', WHOLE],
    ],
    'the question and the whole answer, once',
  );
  t.same(
    [...shownTexts].filter((text) => text.includes('Half') && text.includes('whole')),
    [],
    'the cut answer was never shown with the new one after it',
  );
  const rejoins = fetched.slice(before).filter((url) => url.startsWith(`${nodeB.url}/runs/`));
  t.ok(rejoins.length >= 1, `the SDK re-joined on its own (${rejoins.length} times)`);
  t.equal(llm.requests.length, 2, 'the model was asked twice: the cut attempt and the takeover');

  t.same(
    await storedOf(nodeC, ada, sessionId),
    [
      ['human', 'Tell me everything'],
      ['ai', WHOLE],
    ],
    'stored: the human message and exactly one answer',
  );
  t.comment(`kill -9 mid-answer: the SDK showed the whole answer ${settledMs.toFixed(0)} ms after the kill`);
});

t.test("a cut turn nobody re-joins: the dead node's partition's new owner takes it over", async (t) => {
  const bea = await sdkUser(oracleDid);
  const sessionId = await sessionOn(nodeB, bea, nodeC);
  t.ok(sessionId, "a session on B's partitions");
  if (!sessionId) return;
  const cut = heldAnswer('Half of it, ');
  const WHOLE = 'All of it, stored once.';
  llm.script(cut.responder, sse([chunk({ content: WHOLE }, 'stop')]));
  const asked = llm.requests.length;
  // Streamed through C; the client reads the first words and goes away for good (it never re-joins).
  const controller = new AbortController();
  const res = await sdkSend(nodeC.url, bea, sessionId, { message: 'Tell me all of it' }, controller.signal);
  for await (const frame of sdkFrames(res)) if (frame.event === 'message') break;
  controller.abort();
  t.same(await storedOf(nodeC, bea, sessionId), [], 'nothing stored while the turn runs');

  const killedAt = performance.now();
  await nodeB.kill();
  const stored = await until(
    'the answer of the turn taken over',
    async () => {
      const messages = await storedOf(nodeC, bea, sessionId);
      return messages.length > 0 ? messages : undefined;
    },
    30_000,
  );
  const storedMs = performance.now() - killedAt;
  t.same(
    stored,
    [
      ['human', 'Tell me all of it'],
      ['ai', WHOLE],
    ],
    'the human message and one answer, stored by the new owner with no client asking',
  );
  t.equal(llm.requests.length - asked, 2, 'the model was asked again once');
  const run = await fetch(`${nodeC.url}/sessions/${sessionId}/run`, { headers: bea.headers() });
  t.equal(run.status, 404, 'no run in progress any more');
  t.comment(`kill -9, nobody re-joining: the answer was stored ${storedMs.toFixed(0)} ms after the kill`);
});
