// The oracle across three real server processes in cluster mode (ACTOR_THREADS=1 each) on a real 3-server NATS
// JetStream cluster, through HTTP, SSE, WebSocket and Socket.IO only: a session's actor runs on one node while its
// requests, its stream and its sockets arrive at the others; kill -9 of the node running a session's turns loses no
// acknowledged turn, and its streamed turn is taken over by the partition's new owner; credits spent through two
// nodes at once are spent once; a stream dropped mid-turn is re-joined through another node.
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { partitionOf, DEFAULT_PARTITIONS } from '../dist/src/cluster/partition-leases.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { createDelegation, encodeArtifact, parseKey } from '../dist/src/oracle/auth/mint.js';
import { health, startTestNodes, until, type LocalNode } from './helpers/cluster-nodes.js';
import { closeAll, invocationOf, NativeClient, SocketIoClient } from './helpers/events.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { call, createSession, newUser, openStream, readSse, type SseItem, type User } from './helpers/oracle.js';
import { sdkFrames, type SdkFrame } from './helpers/sdk-client.js';

t.setTimeout(240_000);
const CREDITS = 16;
const nats = await startTestNatsCluster(t);
const cluster = await startTestNodes(t, nats, {
  env: {
    LOG_LEVEL: 'warn',
    CREDITS_ENABLED: 'true',
    CREDITS_INITIAL: String(CREDITS),
    CREDITS_PER_MESSAGE: '1',
    BROWSER_TOOL_TIMEOUT_MS: '20000',
    RATE_LIMIT_MAX: '100000',
  },
});
const [nodeA, nodeB, nodeC] = cluster.nodes;
const oracleDid = parseKey(cluster.keys.ORACLE_PRIVATE_KEY).did();

// The lease table, read as any node reads it: which node runs a session's actor.
const observer = await connectCluster({ NATS_URL: nats.urls.split(','), NATS_PREFIX: 'sar' }, 'test-observer');
t.teardown(() => observer.close());
const leases = await KvRecordStore.open<{ owner?: string | null }>(observer, { name: 'leases' });
const ownerOf = async (sessionId: string) =>
  (await leases.get(['partition', String(partitionOf(sessionId, DEFAULT_PARTITIONS))]))?.value.owner;

/** A session of `user`, created through `via`, whose actor runs on `owner`. */
async function sessionRunningOn(owner: LocalNode, user: User, via: LocalNode): Promise<string> {
  for (let i = 0; i < 30; i++) {
    const sessionId = await createSession(via, user);
    if ((await ownerOf(sessionId)) === owner.nodeId) return sessionId;
  }
  throw new Error(`no session landed on ${owner.nodeId} in 30 tries`);
}

const getPage = {
  name: 'getPage',
  description: 'Reads the page the user looks at',
  schema: { type: 'object', properties: { x: { type: 'number' } } },
};
const framesOf = (items: SseItem[], event: string) =>
  items.filter((item) => item.event === event).map((item) => item.data);
const textOf = (items: SseItem[]) =>
  framesOf(items, 'message')
    .map((m) => m.content)
    .join('');
const transcript = async (via: LocalNode, user: User, sessionId: string) =>
  (await call(via, 'GET', `/messages/${sessionId}`, { user })).body.messages as { type: string; content: string }[];

t.test(
  'a session whose actor runs on node A is listed, streamed, aborted and deleted through node B; its sockets on node C hear its turns and answer its browser tool',
  async (t) => {
    const ada = await newUser(oracleDid);
    const sessionId = await sessionRunningOn(nodeA, ada, nodeA);
    const listed = await call(nodeB, 'GET', '/sessions', { user: ada });
    t.ok(
      listed.body.sessions.some((s: { sessionId: string }) => s.sessionId === sessionId),
      'listed through B',
    );

    const ws = await NativeClient.connect(nodeC.url, { sessionId, invocation: invocationOf(ada) });
    const sio = await SocketIoClient.connect(nodeC.url, { sessionId }, { invocation: invocationOf(ada) });
    closeAll(t, ws, sio);

    // Streamed through B; the browser tool is answered by the Socket.IO client on C.
    const reply = openStream(nodeB, ada, sessionId, { message: 'use getPage {"x":1}', tools: [getPage] }).then(readSse);
    const request = await ws.take('browser_tool_call');
    t.match(
      request,
      { sessionId, toolName: 'getPage', args: { x: 1 } },
      'the WebSocket on C heard the call of the turn on A',
    );
    t.match(
      await sio.take('browser_tool_call'),
      { toolCallId: request.toolCallId },
      'so did the Socket.IO client on C',
    );
    sio.send('tool_result', { toolCallId: request.toolCallId, result: { title: 'Home' } });
    const items = await reply;
    t.equal(
      textOf(items),
      'getPage returned: {"title":"Home"}',
      "the result sent to C reached the turn on A, and B's stream shows it",
    );
    t.equal(items.at(-1)!.event, 'done', 'the stream through B ended with done');
    for (const client of [ws, sio]) {
      await client.take('message_cache_invalidation');
      t.equal(
        client.inbox.names().filter((name) => name === 'browser_tool_call').length,
        1,
        `${client.constructor.name}: each event once`,
      );
    }

    // Aborted through B while the turn waits for its browser tool.
    const aborted = openStream(nodeB, ada, sessionId, { message: 'use getPage {"x":2}', tools: [getPage] }).then(
      readSse,
    );
    await ws.take('browser_tool_call');
    t.same(
      (await call(nodeB, 'POST', '/messages/abort', { user: ada, body: { sessionId } })).body,
      { success: true },
      'the abort through B found the turn on A',
    );
    t.equal((await aborted).at(-1)!.event, 'done', 'the aborted stream still ends with done');

    const messages = await transcript(nodeB, ada, sessionId);
    t.same(
      messages.filter((m) => m.type === 'human').map((m) => m.content),
      ['use getPage {"x":1}', 'use getPage {"x":2}'],
      'both turns are in the transcript read through B',
    );

    t.equal((await call(nodeB, 'DELETE', `/sessions/${sessionId}`, { user: ada })).status, 200, 'deleted through B');
    t.equal((await call(nodeC, 'GET', `/messages/${sessionId}`, { user: ada })).status, 404, 'gone through C');
    const after = await call(nodeA, 'GET', '/sessions', { user: ada });
    t.notOk(
      after.body.sessions.some((s: { sessionId: string }) => s.sessionId === sessionId),
      'no longer listed through A',
    );
  },
);

t.test(
  'DELETE /delegation through node A closes the sockets opened with that delegation on nodes B and C',
  async (t) => {
    const ada = await newUser(oracleDid);
    const sessionId = await createSession(nodeA, ada);
    const raw = await encodeArtifact(await createDelegation({ issuer: ada.key, audience: oracleDid, ttlSeconds: 700 }));
    t.equal((await call(nodeA, 'POST', '/delegation', { user: ada, body: { raw } })).status, 200);
    const ws = await NativeClient.connect(nodeB.url, { sessionId, ucanDelegation: raw });
    const sio = await SocketIoClient.connect(nodeC.url, { sessionId }, { ucanDelegation: raw });
    closeAll(t, ws, sio);
    const sioGone = new Promise<string>((resolve) => sio.socket.once('disconnect', (reason) => resolve(reason)));
    t.equal((await call(nodeA, 'DELETE', '/delegation', { user: ada })).status, 200);
    t.same(
      await ws.closed,
      { code: 4401, reason: 'credential revoked' },
      "B's native socket closed by B's revocation watch",
    );
    t.equal(await sioGone, 'io server disconnect', "C's Socket.IO socket too");
    t.match(await sio.take('error'), { message: 'credential revoked' });
  },
);

t.test('credits spent through two nodes at once are spent once', async (t) => {
  const carol = await newUser(oracleDid);
  // Sessions of one user whose actors run on every node, each sent one message at the same moment, half through B
  // and half through C: the balance allows CREDITS of them.
  const sessionIds: string[] = [];
  for (const owner of cluster.nodes)
    for (let i = 0; i < 6; i++) sessionIds.push(await sessionRunningOn(owner, carol, nodeA));
  const answers = await Promise.all(
    sessionIds.map((sessionId, i) =>
      call(i % 2 ? nodeB : nodeC, 'POST', `/messages/${sessionId}`, { user: carol, body: { message: `pay ${i}` } }),
    ),
  );
  const statuses = answers.map((answer) => answer.status).sort();
  t.equal(statuses.filter((s) => s === 200).length, CREDITS, `${CREDITS} messages answered`);
  t.equal(statuses.filter((s) => s === 402).length, sessionIds.length - CREDITS, 'the rest refused with 402');
});

t.test(
  'a stream through node B dropped mid-turn is re-joined through node C (the actor on A): no frame missing or repeated',
  async (t) => {
    const ada = await newUser(oracleDid);
    const sessionId = await sessionRunningOn(nodeA, ada, nodeB);
    const ws = await NativeClient.connect(nodeC.url, { sessionId, invocation: invocationOf(ada) });
    closeAll(t, ws);
    const controller = new AbortController();
    const res = await fetch(`${nodeB.url}/messages/${sessionId}`, {
      method: 'POST',
      headers: { ...ada.headers(), 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'use getPage {}', tools: [getPage], stream: true }),
      signal: controller.signal,
    });
    const runId = res.headers.get('x-run-id')!;
    const requestId = res.headers.get('x-request-id');
    const first = sdkFrames(res);
    const before: SdkFrame[] = [];
    for await (const frame of first) {
      before.push(frame);
      if (frame.event === 'tool_call' && frame.data.status === 'isRunning') break;
    }
    controller.abort(); // dropped while the turn waits for the browser tool
    const lastId = Math.max(...before.filter((f) => f.id !== undefined).map((f) => Number(f.id)));
    const request = await ws.take('browser_tool_call');
    const running = await call(nodeC, 'GET', `/sessions/${sessionId}/run`, { user: ada });
    t.same(
      [running.status, running.body],
      [200, { run: { runId, status: 'running' } }],
      'node C finds the run node B holds',
    );

    const rejoined = await fetch(`${nodeC.url}/runs/${encodeURIComponent(runId)}?after=${lastId}`, {
      headers: ada.headers(),
    });
    t.equal(rejoined.status, 200, 're-joined through a node that did not stream it');
    t.equal(rejoined.headers.get('x-request-id'), requestId);
    const second = sdkFrames(rejoined);
    const after: SdkFrame[] = [];
    const runFrame = await second.next();
    t.match(runFrame.value, { event: 'run', data: { runId, resumed: false } });
    ws.send('tool_result', { toolCallId: request.toolCallId, result: { title: 'Home' } });
    for await (const frame of second) after.push(frame);
    const all = [...before, ...after];
    const numbered = all.filter((f) => f.id !== undefined).map((f) => Number(f.id));
    t.same(
      numbered,
      numbered.map((_, i) => i + 1),
      `frames 1..${numbered.length}, none missing or repeated`,
    );
    t.equal(
      all
        .filter((f) => f.event === 'message')
        .map((f) => f.data.content)
        .join(''),
      'getPage returned: {"title":"Home"}',
    );
    t.same(all.at(-1)?.data, { status: 'finished' });

    // Ended, replayed whole through the node running the actor (not the one holding the run).
    const replay: SdkFrame[] = [];
    for await (const frame of sdkFrames(
      await fetch(`${nodeA.url}/runs/${encodeURIComponent(runId)}?after=0`, { headers: ada.headers() }),
    ))
      replay.push(frame);
    t.same(
      replay.filter((f) => f.id !== undefined).map((f) => Number(f.id)),
      numbered,
    );
    const ended = await call(nodeC, 'GET', `/sessions/${sessionId}/run`, { user: ada });
    t.same([ended.status, ended.body.message], [404, 'No run in progress'], 'none in progress anywhere now');
    const bob = await newUser(oracleDid);
    t.equal(
      (await fetch(`${nodeC.url}/runs/${encodeURIComponent(runId)}?after=0`, { headers: bob.headers() })).status,
      404,
      "not another user's",
    );
  },
);

t.test(
  'a node paused until its partitions move, then resumed: its warm chat actors continue from the newest state',
  async (t) => {
    const erin = await newUser(oracleDid);
    const turn = (via: LocalNode, sessionId: string, message: string) =>
      call(via, 'POST', `/messages/${sessionId}`, { user: erin, body: { message } });
    // The node paused is the one holding the highest-numbered partition, and the sessions are in its partitions among
    // the top 16: when it returns, the others give back their highest-numbered partitions (partition-leases.ts), so
    // exactly these come back to it, and its actors for them are warm with what they held before the pause.
    const table = await Promise.all(
      Array.from({ length: DEFAULT_PARTITIONS }, (_, p) => leases.get(['partition', String(p)])),
    );
    const owner = (p: number) => table[p]?.value.owner;
    const paused = cluster.nodes.find((node) => node.nodeId === owner(DEFAULT_PARTITIONS - 1))!;
    const [viaB, viaC] = cluster.nodes.filter((node) => node !== paused);
    const top = (p: number) => p >= DEFAULT_PARTITIONS - 16 && owner(p) === paused.nodeId;
    const sessionIds: string[] = [];
    for (let i = 0; sessionIds.length < 6; i++) {
      if (i >= 2_000) throw new Error(`no 6 sessions in ${paused.nodeId}'s top partitions in 2000 tries`);
      const sessionId = await createSession(viaB, erin);
      if (top(partitionOf(sessionId, DEFAULT_PARTITIONS))) sessionIds.push(sessionId);
    }
    // A turn each (14 turns in all: the credits hold 16); two of them are deleted while the node is paused.
    const [kept, gone] = [sessionIds.slice(0, 4), sessionIds.slice(4)];
    const statuses: number[] = [];
    for (const sessionId of sessionIds) statuses.push((await turn(viaB, sessionId, 'one')).status);

    // It stops (alive, holding its actors in memory) until the others own its partitions; they run a turn of each
    // session and delete two.
    await paused.kill('SIGSTOP');
    try {
      await until('the others to take its partitions', async () =>
        (await Promise.all(sessionIds.map(ownerOf))).includes(paused.nodeId) ? undefined : true,
      );
      for (const [i, sessionId] of kept.entries())
        statuses.push((await turn(i % 2 ? viaB : viaC, sessionId, 'two')).status);
      for (const sessionId of gone)
        t.equal(
          (await call(viaC, 'DELETE', `/sessions/${sessionId}`, { user: erin })).status,
          200,
          'deleted while it is paused',
        );
    } finally {
      await paused.kill('SIGCONT');
    }
    await until('it takes its share back', async () =>
      (await health(paused)).cluster.partitions.owned >= 42 ? true : undefined,
    );
    const back = (await Promise.all(sessionIds.map(ownerOf))).filter((node) => node === paused.nodeId).length;
    t.equal(back, sessionIds.length, 'every session runs on it again, on actors that held it as it was after turn one');

    // Through another node (reaching the resumed one): a turn each, then every transcript read through the third.
    for (const sessionId of kept) statuses.push((await turn(viaB, sessionId, 'three')).status);
    t.same(
      statuses.filter((status) => status !== 200),
      [],
      `all ${statuses.length} turns answered 200, none refused by a stale copy`,
    );
    for (const sessionId of kept) {
      const humans = (await transcript(viaC, erin, sessionId)).filter((m) => m.type === 'human').map((m) => m.content);
      t.same(
        humans,
        ['one', 'two', 'three'],
        `${sessionId}: the transcript read through another node continues from the newest state`,
      );
    }
    for (const sessionId of gone) {
      t.equal(
        (await call(viaB, 'GET', `/messages/${sessionId}`, { user: erin })).status,
        404,
        'a session deleted meanwhile reads 404',
      );
      t.equal((await turn(viaB, sessionId, 'again')).status, 404, 'and refuses a turn with 404');
    }
  },
);

t.test(
  'kill -9 of the node running chat turns: every acknowledged turn survives and the sessions continue on the survivors',
  async (t) => {
    const dan = await newUser(oracleDid);
    const sessionIds = [await sessionRunningOn(nodeA, dan, nodeB), await sessionRunningOn(nodeA, dan, nodeC)];
    // A streamed turn through B waits on A for a browser tool its socket on C does not answer.
    const streamed = await sessionRunningOn(nodeA, dan, nodeB);
    const ws = await NativeClient.connect(nodeC.url, { sessionId: streamed, invocation: invocationOf(dan) });
    closeAll(t, ws);
    let streamEndedAt = 0;
    const response = await openStream(nodeB, dan, streamed, { message: 'use getPage {}', tools: [getPage] });
    const runId = response.headers.get('x-run-id')!;
    const open: Promise<SdkFrame[]> = (async () => {
      const frames: SdkFrame[] = [];
      for await (const frame of sdkFrames(response)) frames.push(frame);
      return frames;
    })().finally(() => (streamEndedAt = performance.now()));
    await ws.take('browser_tool_call');
    const acknowledged = new Map(sessionIds.map((id) => [id, [] as string[]]));
    const failures: number[] = [];
    let killedAt = 0;
    const resumedMs: number[] = [];
    // Each session gets turns one after the other, through B and C in turn, until it has 3 acknowledged after A died.
    // A dies once 3 turns were acknowledged in all: turns are in flight on it then.
    const killing = (async () => {
      while ([...acknowledged.values()].flat().length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
      killedAt = performance.now();
      await nodeA.kill();
    })();
    await Promise.all(
      sessionIds.map(async (sessionId) => {
        let after = 0;
        for (let i = 0; after < 3; i++) {
          if (i >= 30)
            throw new Error(`${sessionId}: no 3 answers after the kill in 30 attempts (${JSON.stringify(failures)})`);
          const via = i % 2 ? nodeC : nodeB;
          const sentAt = performance.now();
          const answer = await call(via, 'POST', `/messages/${sessionId}`, {
            user: dan,
            body: { message: `turn ${i}` },
            signal: AbortSignal.timeout(30_000),
          }).catch(() => ({ status: 0 }));
          if (answer.status === 200) {
            acknowledged.get(sessionId)!.push(`turn ${i}`);
            if (killedAt && sentAt > killedAt && after++ === 0) resumedMs.push(performance.now() - killedAt);
          } else failures.push(answer.status);
        }
      }),
    );
    await killing;
    const frames = await open;
    t.not(
      frames.at(-1)?.event,
      'done',
      'the stream through B whose turn ran on A drops without `done`: the run goes on',
    );
    const streamMs = streamEndedAt - killedAt;
    t.ok(streamMs < 5_000, `it dropped ${streamMs.toFixed(0)} ms after the kill (pings every second)`);
    // Re-joined through C: the partition's new owner runs the turn again from its open run (the stored message).
    const lastId = Math.max(...frames.filter((f) => f.id !== undefined).map((f) => Number(f.id)));
    const rejoined = await fetch(`${nodeC.url}/runs/${encodeURIComponent(runId)}?after=${lastId}`, {
      headers: dan.headers(),
    });
    t.equal(rejoined.status, 200, 'the run outlived the node that ran it');
    const after: SdkFrame[] = [];
    const reading = (async () => {
      for await (const frame of sdkFrames(rejoined)) after.push(frame);
    })();
    const again = await ws.take('browser_tool_call');
    ws.send('tool_result', { toolCallId: again.toolCallId, result: { title: 'Home' } });
    await reading;
    t.match(
      after.find((f) => f.id !== undefined),
      { event: 'run', data: { runId, resumed: true, partialLength: 0, status: 'recovering' } },
      'the first new frame says the run is recovering: the client drops the cut answer',
    );
    const numbered = [...frames, ...after].filter((f) => f.id !== undefined).map((f) => Number(f.id));
    t.same(
      numbered,
      numbered.map((_, i) => i + 1),
      'numbered on from where the client was',
    );
    t.equal(textOf(after as unknown as SseItem[]), 'getPage returned: {"title":"Home"}', 'the whole new answer');
    t.same(after.at(-1)?.data, { status: 'finished' });
    const stored = await transcript(nodeC, dan, streamed);
    t.same(
      stored.map((m) => [m.type, m.content]),
      [
        ['human', 'use getPage {}'],
        ['ai', 'getPage returned: {"title":"Home"}'],
      ],
      'the human message and exactly one answer, committed together by the new owner',
    );
    for (const sessionId of sessionIds) {
      const humans = (await transcript(nodeC, dan, sessionId)).filter((m) => m.type === 'human').map((m) => m.content);
      const acked = acknowledged.get(sessionId)!;
      t.same(
        acked.filter((turn) => !humans.includes(turn)),
        [],
        `every one of ${acked.length} acknowledged turns is in ${sessionId}'s transcript read through C`,
      );
      t.not(await ownerOf(sessionId), nodeA.nodeId, 'a survivor runs the session now');
    }
    t.ok(
      Math.max(...resumedMs) < 10_000,
      `the sessions answered again ${resumedMs.map((ms) => ms.toFixed(0)).join(' and ')} ms after the kill`,
    );
    t.comment(`kill -9: the stream through B dropped ${streamMs.toFixed(0)} ms after it`);
    t.comment(
      `kill -9: sessions answered again ${resumedMs.map((ms) => ms.toFixed(0)).join(', ')} ms after the kill; refused meanwhile: ${JSON.stringify(failures)}`,
    );
  },
);
