// The actor side of client tools (actor/bridge.ts) on its own: what a call publishes, and which answers
// settle it (session, user, kind, once), timeouts, aborts and an unreachable client.
import t from 'tap';
import { ChannelToolBridge, outputOf } from '../dist/src/oracle/actor/bridge.js';

function setup(timeoutMs = 60_000) {
  const published: { topic: string; event: string; data: any }[] = [];
  const bridge = new ChannelToolBridge((topic, event, data) => published.push({ topic, event, data }), timeoutMs);
  const controller = new AbortController();
  const context = (toolCallId: string, sessionId = 's1', userDid = 'did:key:ada') => ({
    userDid,
    oracleDid: 'did:key:oracle',
    sessionId,
    requestId: 'req-1',
    toolCallId,
    signal: controller.signal,
  });
  return { bridge, published, controller, context };
}

const result = (toolCallId: string, extra: Record<string, unknown> = {}) => ({
  type: 'client_result' as const,
  kind: 'browser' as const,
  toolCallId,
  userDid: 'did:key:ada',
  ...extra,
});

t.test('a browser call publishes browser_tool_call and resolves with the first matching answer', async (t) => {
  const { bridge, published, context } = setup();
  const pending = bridge.call({ kind: 'browser', toolName: 'getPage', args: { x: 1 }, context: context('c1') });
  t.same(published, [
    {
      topic: 's1',
      event: 'browser_tool_call',
      data: { sessionId: 's1', requestId: 'req-1', toolCallId: 'c1', toolName: 'getPage', args: { x: 1 } },
    },
  ]);

  t.equal(bridge.settle('s2', result('c1')), false, 'another session');
  t.equal(bridge.settle('s1', result('c1', { userDid: 'did:key:bob' })), false, 'another user');
  t.equal(bridge.settle('s1', result('c1', { kind: 'action' })), false, 'another kind');
  t.equal(bridge.settle('s1', result('c2')), false, 'another call');
  t.equal(bridge.settle('s1', result('c1', { result: { ok: true } })), true, 'the right answer');
  t.equal(bridge.settle('s1', result('c1', { result: 'again' })), false, 'only once');
  t.equal(await pending, '{"ok":true}');
  t.equal(bridge.pendingCount, 0);
});

t.test('the same call id in two sessions are two calls', async (t) => {
  const { bridge, context } = setup();
  const a = bridge.call({ kind: 'browser', toolName: 'getPage', args: {}, context: context('same', 's1') });
  const b = bridge.call({ kind: 'browser', toolName: 'getPage', args: {}, context: context('same', 's2') });
  bridge.settle('s2', result('same', { result: 'B' }));
  bridge.settle('s1', result('same', { result: 'A' }));
  t.same(await Promise.all([a, b]), ['A', 'B']);
});

t.test('an action publishes action_call isRunning; success: false and error texts fail it', async (t) => {
  const { bridge, published, context } = setup();
  const declined = bridge.call({ kind: 'action', toolName: 'pay', args: { amount: 5 }, context: context('a1') });
  t.match(published[0], {
    event: 'action_call',
    data: { toolCallId: 'a1', toolName: 'pay', args: { amount: 5 }, status: 'isRunning' },
  });
  bridge.settle('s1', { ...result('a1'), kind: 'action', result: { success: false, error: 'declined' } });
  await t.rejects(declined, { message: 'The action pay failed on the client: declined' });

  const thrown = bridge.call({ kind: 'browser', toolName: 'getPage', args: {}, context: context('b1') });
  bridge.settle('s1', result('b1', { error: 'Tool getPage not found' }));
  await t.rejects(thrown, {
    name: 'ClientToolError',
    message: 'The browser tool getPage failed on the client: Tool getPage not found',
  });

  const plain = bridge.call({ kind: 'action', toolName: 'pay', args: {}, context: context('a2') });
  bridge.settle('s1', { ...result('a2'), kind: 'action', result: { success: true } });
  t.equal(await plain, '{"success":true}');
});

t.test('timeout, abort and an unreachable client fail the call and forget it', async (t) => {
  const slow = setup(50);
  await t.rejects(slow.bridge.call({ kind: 'browser', toolName: 'getPage', args: {}, context: slow.context('t1') }), {
    name: 'ClientToolTimeoutError',
    message: 'The browser tool getPage got no result from the client within 50 ms',
  });
  t.equal(slow.bridge.settle('s1', result('t1')), false, 'a late answer settles nothing');

  const aborted = setup();
  const waiting = aborted.bridge.call({
    kind: 'browser',
    toolName: 'getPage',
    args: {},
    context: aborted.context('x1'),
  });
  aborted.controller.abort(new Error('stopped by the user'));
  await t.rejects(waiting, { message: 'stopped by the user' });
  t.equal(aborted.bridge.pendingCount, 0);
  await t.rejects(
    aborted.bridge.call({ kind: 'browser', toolName: 'getPage', args: {}, context: aborted.context('x2') }),
    { message: 'stopped by the user' },
    'an aborted turn calls nothing',
  );
  t.equal(aborted.published.length, 1, 'nothing published for it');

  const alone = setup();
  const nobody = alone.bridge.call({ kind: 'action', toolName: 'pay', args: {}, context: alone.context('u1') });
  t.equal(alone.bridge.settle('s1', { type: 'client_unreachable', toolCallId: 'u1' }), true);
  await t.rejects(nobody, {
    name: 'NoEventChannelError',
    message: /^No event channel is connected for this session, so the action pay cannot run/,
  });
});

t.test('outputOf: text as is, anything else as JSON', async (t) => {
  t.equal(outputOf('text'), 'text');
  t.equal(outputOf(undefined), '');
  t.equal(outputOf(null), 'null');
  t.equal(outputOf(0), '0');
  t.equal(outputOf({ a: [1] }), '{"a":[1]}');
});
