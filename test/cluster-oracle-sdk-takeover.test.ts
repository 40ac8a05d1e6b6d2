// @ixo/oracles-client-sdk 1.4.0's own useChat hook (under react-test-renderer) against three real server processes
// in cluster mode on a real 3-server NATS JetStream cluster: a turn streamed through node B runs on node A (its
// session's partition is A's); A is killed with SIGKILL while the model is half-way through its answer. The SDK,
// left to itself, re-joins the run through B; the partition's new owner takes the turn over (the run goes
// `recovering`, the model is asked again) and the hook ends with the whole new answer shown, no error, and exactly
// one answer stored.
import { useChat } from '@ixo/oracles-client-sdk';
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { DEFAULT_PARTITIONS, partitionOf } from '../dist/src/cluster/partition-leases.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { parseKey } from '../dist/src/oracle/auth/mint.js';
import { startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { sdkUser } from './helpers/sdk-client.js';
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

t.test('kill -9 of the node streaming a turn: the SDK re-joins and shows the whole answer', async (t) => {
  const ada = await sdkUser(oracleDid);
  let sessionId: string | undefined;
  for (let i = 0; i < 30 && !sessionId; i++) {
    const res = await fetch(`${nodeB.url}/sessions`, { method: 'POST', headers: ada.headers() });
    const created = ((await res.json()) as { sessionId: string }).sessionId;
    if ((await ownerOf(created)) === nodeA.nodeId) sessionId = created;
  }
  if (!t.ok(sessionId, "a session on A's partitions")) return;

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
  const rejoins = fetched.slice(before).filter((url) => url.startsWith(`${nodeB.url}/runs/`));
  t.ok(rejoins.length >= 1, `the SDK re-joined on its own (${rejoins.length} times)`);
  t.equal(llm.requests.length, 2, 'the model was asked twice: the cut attempt and the takeover');

  const stored = await fetch(`${nodeC.url}/messages/${sessionId}`, { headers: ada.headers() });
  const { messages } = (await stored.json()) as { messages: { type: string; content: string }[] };
  t.same(
    messages.map((m) => [m.type, m.content]),
    [
      ['human', 'Tell me everything'],
      ['ai', WHOLE],
    ],
    'stored: the human message and exactly one answer',
  );
  t.comment(`kill -9 mid-answer: the SDK showed the whole answer ${settledMs.toFixed(0)} ms after the kill`);
});
