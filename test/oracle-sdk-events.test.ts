// The event handlers of @ixo/oracles-client-sdk 1.4.0 against this server, through its own useChat hook (under
// react-test-renderer): a turn sent by another client of the same user (another tab) reaches the hook only through
// the Socket.IO channel. Its tool_call must reach the SDK's handleNewEvent (which shows it as a message) and its
// message_cache_invalidation must make the hook refetch the history (which then shows the turn). The SDK acts on
// both only when they come as `{ eventName, payload }` envelopes (docs/events.md); clients reading the bare named
// events must still get them, once each, as before.
import { useChat } from '@ixo/oracles-client-sdk';
import t, { type Test } from 'tap';
import { SocketIoClient } from './helpers/events.js';
import { startOracleServer } from './helpers/oracle.js';
import { sdkReadAll, sdkSend, sdkUser } from './helpers/sdk-client.js';
import { mountHook, onlyTo } from './helpers/sdk-hooks.js';

interface Shown {
  id: string;
  type: string;
  content: unknown;
}

/** The components an app gives the hook (it shows nothing of socket events without them); never rendered here. */
const UI_COMPONENTS = { ToolCall: () => null, Error: () => null };

const server = await startOracleServer(t);
const ada = await sdkUser(server.oracleDid);
const fetched = onlyTo(t, server.url);

async function newSession(t: Test): Promise<string> {
  const res = await fetch(`${server.url}/sessions`, { method: 'POST', headers: ada.headers() });
  t.equal(res.status, 201);
  return ((await res.json()) as { sessionId: string }).sessionId;
}

t.test("another tab's turn: its tool call reaches handleNewEvent, its cache invalidation refetches", async (t) => {
  const sessionId = await newSession(t);
  // A client of the bare events, beside the SDK.
  const bare = await SocketIoClient.connect(server.url, { sessionId }, { ucanDelegation: ada.delegation });
  t.teardown(() => bare.close());
  // Props kept stable across renders, as an app keeps them (a new `uiComponents` per render loops the hook).
  const props = {
    oracleDid: server.oracleDid,
    sessionId,
    overrides: { baseUrl: server.url },
    uiComponents: UI_COMPONENTS,
    onPaymentRequiredError: () => undefined,
  };
  const chat = mountHook(t, ada, () => useChat(props));
  await chat.until((c) => c.isRealTimeConnected && !c.isLoading, 'its socket connected and the history loaded');
  t.same(chat.current.messages, [], 'a new session: nothing to show');
  const before = fetched.length;

  // Every message the hook shows, as first shown, from before the turn: the tool call's message may be shown only
  // until the refetch the invalidation triggers replaces the messages, which can land before the other tab has read
  // its whole stream.
  const firstShown = new Map<string, Shown>();
  // The runs the hook followed: one that joined the other tab's run (from the history it refetched) drops that run's
  // tool_call events by design (handleNewEvent skips the requestId of its own run) and shows the run's stream.
  const runsFollowed = new Set<string>();
  chat.watch((c) => {
    for (const m of c.messages as Shown[]) if (!firstShown.has(m.id)) firstShown.set(m.id, m);
    const followed = (c.run as { requestId?: string } | undefined)?.requestId;
    if (followed) runsFollowed.add(followed);
  });

  // The other tab (plain requests as the SDK makes them): a preferences request is a server tool call.
  const frames = await sdkReadAll(await sdkSend(server.url, ada, sessionId, { message: 'Call yourself Sage' }));
  const call = frames.find((frame) => frame.event === 'tool_call')?.data;
  if (!t.ok(call, 'the turn called a tool')) return;
  const reply = frames
    .filter((frame) => frame.event === 'message')
    .map((frame) => frame.data.content)
    .join('');

  // Shown under an id made of the request and one of the call's events (its start's, or its end's when both
  // reached the hook in one render): any message that shows this request's tool call.
  const isThisCall = (m: Shown) =>
    m.id.startsWith(`${call.requestId}-tool_call-`) &&
    (m.content as { props?: { isToolCall?: boolean } } | undefined)?.props?.isToolCall === true;
  const toolCallShown = () => [...firstShown.values()].find(isThisCall);
  await chat.until(
    () => toolCallShown() !== undefined || runsFollowed.has(call.requestId),
    'the tool call as a message (handleNewEvent), or the run joined',
  );
  // Shown, or else (the wait passed) the run was joined.
  const shown = toolCallShown();
  if (shown)
    t.match(shown, {
      type: 'ai',
      content: { props: { isToolCall: true, payload: { sessionId, requestId: call.requestId } } },
    });
  else t.comment("the hook joined the other tab's run, so its own stream showed the tool call");

  const refetched = await chat.until(
    (c) =>
      c.messages.some((m: Shown) => m.type === 'human' && m.content === 'Call yourself Sage') &&
      // With uiComponents the SDK shows an answer as its text beside its tool calls' components.
      c.messages.some((m: Shown) => m.type === 'ai' && Array.isArray(m.content) && m.content.includes(reply)),
    "the other tab's turn in the history (refetched on message_cache_invalidation)",
  );
  t.ok(refetched.messages.length >= 2);
  t.ok(
    fetched.slice(before).some((url) => url.startsWith(`${server.url}/sessions/${sessionId}/messages?`)),
    'the history was fetched again',
  );

  // The bare client got each named event once, with its payload as before.
  const bareCall = await bare.take('tool_call');
  t.same(bareCall, call, 'tool_call: the SSE frame payload');
  const invalidation = await bare.take('message_cache_invalidation');
  t.match(invalidation, { sessionId, requestId: call.requestId, status: 'done' });
  await bare.sync();
  const named = bare.inbox.names().filter((name) => name === 'message_cache_invalidation');
  t.equal(named.length, 1, 'one bare message_cache_invalidation');
  const envelopes = bare.inbox.all.filter((item) => item.event === 'oracle_event').map((item) => item.data);
  t.same(
    envelopes.map((envelope) => envelope.eventName),
    ['tool_call', 'tool_call', 'message_cache_invalidation'],
    'the envelopes: the tool call starting and ending, the invalidation; no router_update or reasoning',
  );
  t.same(envelopes[0], { eventName: 'tool_call', payload: call }, 'an envelope carries the bare payload');
});
