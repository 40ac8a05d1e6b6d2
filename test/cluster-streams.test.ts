// Cross-node actor streams and events on a real 3-server NATS JetStream cluster: three nodes, each a real
// ActorRuntime (one actor host, its own LMDB) behind a NatsActorRouter and a ClusterEventBus. A chat turn runs on
// the node holding its session's partition; its SSE frames are read, acknowledged and cancelled from another node.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectCluster } from '../dist/src/cluster/connection.js';
import { ClusterEventBus } from '../dist/src/cluster/event-bus.js';
import { NatsActorRouter, type ActorRequest } from '../dist/src/cluster/nats-router.js';
import { NodeLinks } from '../dist/src/cluster/node-link/peers.js';
import { LinkServer } from '../dist/src/cluster/node-link/server.js';
import { PartitionLeases, partitionOf } from '../dist/src/cluster/partition-leases.js';
import { loadConfig } from '../dist/src/app/config.js';
import { CHAT_ACTOR, STREAM_WINDOW, type StreamMessage } from '../dist/src/oracle/chat/chat-protocol.js';
import { createLogger } from '../dist/src/base/log.js';
import { encodeBatch, toBatch } from '../dist/src/oracle/frame-batch.js';
import { ActorRuntime, HostUnavailableError } from '../dist/src/runtime/actor-runtime.js';
import type { ActorStream } from '../dist/src/runtime/router.js';
import type { ActorEvent } from '../dist/src/runtime/messages.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';

t.setTimeout(90_000);
const nats = await startTestNatsCluster(t);
const PARTITIONS = 32;
const PING_MS = 500;
const oracle = { oracleDid: 'did:key:z6MkOracle', oracleName: 'Oracle' };
const userDid = 'did:key:z6MkUser';
const CHAT = CHAT_ACTOR.kind;

async function startNode(id: string, server: number) {
  const dataDir = mkdtempSync(join(tmpdir(), `streams-${id}-`));
  const config = loadConfig({ DATA_DIR: dataDir, ACTOR_THREADS: '1', LOG_LEVEL: 'silent', METRICS_ENABLED: 'false' });
  const runtime = new ActorRuntime({ threads: 1, config, log: createLogger('silent') });
  t.teardown(async () => {
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await runtime.start();
  const connection = await connectCluster({ NATS_URL: [nats.servers[server].url], NATS_PREFIX: 'st' }, id);
  // Calls (a stream's opening included) go over the node link, as the server's do by default.
  let router: NatsActorRouter | undefined;
  const linkServer = await LinkServer.listen({
    host: '127.0.0.1',
    port: 0,
    token: randomBytes(16).toString('hex'),
    answer: (request) => router!.answer(request as ActorRequest),
  });
  const links = new NodeLinks();
  const leases = await PartitionLeases.join(connection, {
    nodeId: id,
    partitions: PARTITIONS,
    link: linkServer.address,
  });
  router = new NatsActorRouter({
    connection,
    leases,
    local: runtime,
    streamLiveness: { pingMs: PING_MS, silentMs: 3 * PING_MS },
    links,
  });
  const events = new ClusterEventBus(connection, runtime);
  t.teardown(async () => {
    events.close();
    router.close();
    await leases.leave();
    await linkServer.close();
    links.close();
    if (!connection.nc.isClosed()) await connection.close();
  });
  return { id, runtime, connection, leases, router: router as NatsActorRouter, events, linkServer };
}

const nodes: Awaited<ReturnType<typeof startNode>>[] = [];
for (const [i, id] of ['node-a', 'node-b', 'node-c'].entries()) nodes.push(await startNode(id, i));
const [a, b, c] = nodes;
const held = () => nodes.map((node) => node.leases.owned.size);

/** The transcript's first part through `node`'s router: the actor answers parts of JSON text (GET /messages). */
async function messagesVia(node: (typeof nodes)[number], sessionId: string) {
  const part = (await node.router.send(CHAT, sessionId, { type: 'messages', userDid, from: 0 })) as { json: string };
  return JSON.parse(`[${part.json}]`) as { type: string; content: string }[];
}
while (held().reduce((x, y) => x + y, 0) !== PARTITIONS || held().some((n) => n === 0)) {
  await new Promise<void>((resolve) => a.leases.once('table', () => resolve()));
}

/** A fresh session whose partition `owner` holds, created through another node. */
let sessions = 0;
async function sessionOn(owner: (typeof nodes)[number]): Promise<string> {
  for (;;) {
    const sessionId = `stream-session-${sessions++}`;
    if (!owner.leases.owns(partitionOf(sessionId, PARTITIONS))) continue;
    await b.router.send(CHAT, sessionId, { type: 'create', userDid, ...oracle });
    return sessionId;
  }
}

/** A message the built-in agent echoes word by word: about `words` frames. */
const longMessage = (words: number) => Array.from({ length: words }, (_, i) => `w${i}`).join(' ');
const turn = (sessionId: string, message: string) => ({
  type: 'turn',
  userDid,
  sessionId,
  turnId: `turn-${sessions++}`,
  at: Date.now(),
  requestId: 'r',
  message,
  ...oracle,
});

/** Reads a stream's messages as they come; `acking` decides whether frames are acknowledged at once. */
function reader(stream: ActorStream, acking = true) {
  const state = { messages: [] as StreamMessage[], frames: 0, acked: 0, acking, text: '' };
  const waiters: (() => void)[] = [];
  stream.channel.on('message', (message: StreamMessage) => {
    state.messages.push(message);
    if (message.type === 'frames') {
      state.frames += message.batch.events.length;
      state.text += encodeBatch(message.batch, 0, false);
      if (state.acking) ack();
    }
    for (const wake of waiters.splice(0)) wake();
  });
  const ack = () => stream.channel.postMessage({ type: 'ack', frames: (state.acked = state.frames) });
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { state, ack, until, ended: () => until(() => state.messages.at(-1)?.type === 'end') };
}

/** Polls `check` every 50 ms until it answers something. */
async function until<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The `content` of every `message` SSE frame, joined. */
const answerOf = (sse: string) =>
  sse
    .split('\n\n')
    .filter((frame) => frame.startsWith('event: message'))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)).content)
    .join('');

t.test(
  'a stream opened on one node for an actor on another delivers every frame in order, held back by a slow reader',
  async (t) => {
    const sessionId = await sessionOn(a);
    const words = longMessage(200);
    const stream = b.router.stream(CHAT, sessionId, turn(sessionId, words));
    const read = reader(stream, false);
    // Nothing acknowledged: the actor on node-a stops after one window.
    await read.until(() => read.state.frames >= STREAM_WINDOW);
    await a.connection.nc.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.equal(read.state.frames, STREAM_WINDOW, `the writer waits after ${STREAM_WINDOW} unacknowledged frames`);
    read.state.acking = true;
    read.ack();
    await read.ended();
    await stream.done;
    stream.channel.close();
    t.same(
      read.state.messages.slice(0, 2).map((m) => m.type),
      ['started', 'open'],
      'the turn left the mailbox, then the stream opened',
    );
    t.match(read.state.messages.at(-1), { type: 'end', ending: { type: 'turn' } }, 'the end came last');
    t.ok(read.state.frames > 200, `${read.state.frames} frames`);
    t.match(answerOf(read.state.text), `You said: "${words}"`, 'the answer arrived whole and in order');
    const transcript = await messagesVia(c, sessionId);
    t.match(transcript.at(-1)!.content, `You said: "${words}"`, 'the turn was committed on its owner');
  },
);

t.test(
  "a turn's supersede signal and the turn, sent together through another node, arrive in that order",
  async (t) => {
    // The chat routes announce a turn with a signal and send it in the same event-loop turn (routes/deps.ts): the
    // signal marks older turns stale and stops the one running. Arriving after the turn, it would stop the turn itself.
    // Each time through a caller whose link to the owner is not open yet: its first call waits for the connection.
    const sessionId = await sessionOn(c);
    for (let i = 0; i < 4; i++) {
      const links = new NodeLinks();
      const caller = new NatsActorRouter({ connection: b.connection, leases: b.leases, local: b.runtime, links });
      const message = turn(sessionId, longMessage(60));
      void caller.signal(CHAT, sessionId, { type: 'abort', userDid, supersededBy: message.turnId, at: message.at });
      const read = reader(caller.stream(CHAT, sessionId, message));
      await read.ended();
      caller.close();
      links.close();
      t.match(read.state.messages.at(-1), { type: 'end', ending: { type: 'turn', aborted: false } }, `turn ${i} ran`);
    }
  },
);

t.test(
  'an older turn announced late (a signal retried after a failover) neither makes the newer one stale nor stops it',
  async (t) => {
    const sessionId = await sessionOn(c);
    const older = turn(sessionId, 'older');
    const newer = { ...turn(sessionId, longMessage(120)), at: older.at + 1_000 };
    await b.router.signal(CHAT, sessionId, { type: 'abort', userDid, supersededBy: newer.turnId, at: newer.at });
    const announceOlderLate = () =>
      b.router.signal(CHAT, sessionId, { type: 'abort', userDid, supersededBy: older.turnId, at: older.at });
    t.equal(await announceOlderLate(), false, 'the late announcement before the turn started changed nothing');
    const read = reader(b.router.stream(CHAT, sessionId, newer));
    await read.until(() => read.state.frames > 0);
    t.equal(await announceOlderLate(), false, 'nor while it runs');
    await read.ended();
    t.match(
      read.state.messages.at(-1),
      { type: 'end', ending: { type: 'turn', aborted: false } },
      'the newer turn ran',
    );
    // A newer announcement still stops it: a turn after it.
    const third = turn(sessionId, longMessage(120));
    const running = reader(b.router.stream(CHAT, sessionId, { ...third, at: newer.at + 1_000 }));
    await running.until(() => running.state.frames > 0);
    t.equal(
      await b.router.signal(CHAT, sessionId, {
        type: 'abort',
        userDid,
        supersededBy: 'a-fourth',
        at: newer.at + 2_000,
      }),
      true,
      'a newer announcement stops the running turn',
    );
    await running.ended();
    t.match(running.state.messages.at(-1), { type: 'end', ending: { type: 'turn', aborted: true } });
  },
);

t.test('a refusal of the remote actor arrives as the stream`s first message after started', async (t) => {
  const stream = b.router.stream(CHAT, 'stream-absent', turn('stream-absent', 'hi'));
  const read = reader(stream);
  await read.until(() => read.state.messages.length > 0);
  await read.until(() => read.state.messages.length > 1);
  t.equal(read.state.messages[0].type, 'started', 'the turn left the mailbox');
  t.match(
    read.state.messages[1],
    { type: 'refused', error: { name: 'DomainError', code: 'session_not_found' } },
    'and was refused',
  );
  await stream.done;
  stream.channel.close();
});

t.test("the caller's cancel reaches the actor, and so does the caller closing mid-stream", async (t) => {
  for (const how of ['cancel', 'close'] as const) {
    const sessionId = await sessionOn(a);
    const stream = c.router.stream(CHAT, sessionId, turn(sessionId, longMessage(400)));
    const read = reader(stream, false);
    await read.until(() => read.state.frames >= STREAM_WINDOW);
    if (how === 'cancel') {
      stream.channel.postMessage({ type: 'cancel' });
      await read.ended();
      stream.channel.close();
    } else stream.channel.close();
    await stream.done;
    // The actor stopped mid-answer: the stored reply is the part generated before the cancel, far from all of it.
    const transcript = await messagesVia(b, sessionId);
    const reply = transcript.at(-1)!;
    t.equal(reply.type, 'ai', `${how}: the turn ended and was stored`);
    t.ok(
      reply.content.split(' ').length < 300,
      `${how}: generation stopped early (${reply.content.split(' ').length} words of about 440)`,
    );
  }
});

t.test('events of a turn reach the sockets following its session on other nodes exactly once', async (t) => {
  const sessionId = await sessionOn(a);
  const heard = new Map(nodes.map((node) => [node.id, [] as ActorEvent[]]));
  for (const node of nodes) {
    const stop = node.events.onEvent((event) => event.topic === sessionId && heard.get(node.id)!.push(event));
    t.teardown(stop);
  }
  a.events.follow(sessionId); // the owner has a socket too: its own events must not come back to it
  b.events.follow(sessionId);
  c.events.follow('another-session');
  t.teardown(() => {
    for (const node of [a, b]) node.events.unfollow(sessionId);
  });
  await Promise.all(nodes.map((node) => node.connection.nc.flush()));
  t.equal(await c.events.followedElsewhere(sessionId), true, 'another node follows the session');
  t.equal(await c.events.followedElsewhere('nobody-follows-this'), false, 'no node follows that one');

  const startedAt = performance.now();
  await c.router.send(CHAT, sessionId, turn(sessionId, 'hello'));
  const local = heard.get(a.id)!;
  t.ok(
    local.some((event) => event.event === 'message_cache_invalidation'),
    `the owner heard ${local.length} events`,
  );
  await new Promise<void>((resolve) => {
    const check = () => (heard.get(b.id)!.length >= local.length ? resolve() : setTimeout(check, 5));
    check();
  });
  const latencyMs = performance.now() - startedAt;
  await Promise.all(nodes.map((node) => node.connection.nc.flush()));
  t.same(heard.get(b.id), local, 'the follower heard the same events, in order, once each');
  t.same(heard.get(a.id), local, 'no echo on the owner');
  t.same(heard.get(c.id), [], 'a node not following the session heard nothing');
  t.comment(`turn sent to last event on the follower: ${latencyMs.toFixed(0)} ms`);

  b.events.unfollow(sessionId);
  await b.connection.nc.flush();
  const before = heard.get(b.id)!.length;
  await c.router.send(CHAT, sessionId, turn(sessionId, 'again'));
  await Promise.all(nodes.map((node) => node.connection.nc.flush()));
  t.equal(heard.get(b.id)!.length, before, 'after unfollow nothing more arrives');
});

t.test('a message lost in transit fails the stream instead of leaving a hole in it', async (t) => {
  // A stranger on the stream's subject sends a message out of sequence, as if the one before it had been lost.
  const spy = await connectCluster({ NATS_URL: [nats.servers[2].url], NATS_PREFIX: 'st' }, 'spy');
  t.teardown(() => spy.close());
  const seen = spy.nc.subscribe('_INBOX.*.out', { max: 1 });
  await spy.nc.flush();
  const sessionId = await sessionOn(a);
  const stream = b.router.stream(CHAT, sessionId, turn(sessionId, longMessage(200)));
  const read = reader(stream, false);
  for await (const msg of seen)
    spy.nc.publish(
      msg.subject,
      JSON.stringify({
        s: 1_000,
        m: { type: 'frames', batch: toBatch(1, [{ event: 'message', data: { content: 'bogus' } }]) },
      }),
    );
  t.match(await stream.done.catch((e: unknown) => e), { name: 'HostUnavailableError', message: /lost messages/ });
  t.notOk(read.state.text.includes('bogus'), 'the out-of-sequence message was not delivered');
  stream.channel.close();
});

t.test("the caller's node dying mid-stream cancels the actor's stream within the silence bound", async (t) => {
  // A caller node holding no partition, on its own connection, so its death touches nothing else.
  const connection = await connectCluster({ NATS_URL: [nats.servers[1].url], NATS_PREFIX: 'st' }, 'caller');
  const noPartitions = Object.assign(new EventEmitter(), {
    nodeId: 'caller',
    partitions: PARTITIONS,
    owned: new Set<number>(),
    owns: () => false,
    ownerOf: (p: number) => a.leases.ownerOf(p),
    isLive: (id: string) => a.leases.isLive(id),
  });
  const caller = new NatsActorRouter({
    connection,
    leases: noPartitions as unknown as PartitionLeases,
    local: b.runtime,
    streamLiveness: { pingMs: PING_MS, silentMs: 3 * PING_MS },
  });
  const sessionId = await sessionOn(a);
  const stream = caller.stream(CHAT, sessionId, turn(sessionId, longMessage(400)));
  const read = reader(stream, false);
  await read.until(() => read.state.frames >= STREAM_WINDOW);
  const diedAt = performance.now();
  await connection.nc.close();
  t.match(
    await stream.done.catch((e: unknown) => e),
    { name: 'HostUnavailableError' },
    'the dead caller itself reads a failure',
  );
  // The actor waits for acknowledgements that will never come, until its node gives the caller up and cancels.
  const reply = await until(async () => {
    const reply = (await messagesVia(a, sessionId)).at(-1);
    return reply?.type === 'ai' ? reply : undefined;
  });
  const cancelledMs = performance.now() - diedAt;
  t.ok(
    reply.content.split(' ').length < 300,
    `the turn stopped early and was stored (${reply.content.split(' ').length} words)`,
  );
  t.ok(
    cancelledMs <= 4 * PING_MS + 1_000,
    `cancelled ${cancelledMs.toFixed(0)} ms after the caller's death (bound: silence ${3 * PING_MS} ms + one check ${PING_MS} ms)`,
  );
  t.comment(`caller death: the owner cancelled the stream after ${cancelledMs.toFixed(0)} ms`);
});

t.test(
  "the owner dying mid-stream rejects the stream's done within the ping bound, and a call in flight within a lease",
  async (t) => {
    const sessionId = await sessionOn(c);
    const stream = b.router.stream(CHAT, sessionId, turn(sessionId, longMessage(200)));
    const read = reader(stream, false);
    await read.until(() => read.state.frames >= STREAM_WINDOW);
    // A JSON turn that waits on the owner for a browser tool's answer (no socket here tells it none will come).
    const waiting = await sessionOn(c);
    const tools = [{ name: 'getPage', description: 'Reads the page', schema: { type: 'object' } }];
    const inFlight = a.router
      .send(CHAT, waiting, { ...turn(waiting, 'use getPage {}'), tools }, 60_000)
      .catch((e: unknown) => e);
    await until(async () =>
      (await a.router.signal(CHAT, waiting, { type: 'owns', userDid })) === true ? true : undefined,
    );
    // Death: the owner's connection is cut without anything said (as kill -9 does).
    const diedAt = performance.now();
    await c.connection.nc.close();
    const error = await stream.done.catch((e: unknown) => e);
    const detectedMs = performance.now() - diedAt;
    stream.channel.close();
    t.ok(error instanceof HostUnavailableError, 'HostUnavailableError, as when a local actor host dies');
    t.match(error, { message: /stream's node is gone/ });
    t.ok(
      detectedMs <= PING_MS + 500,
      `noticed ${detectedMs.toFixed(0)} ms after the death (bound: one ping, ${PING_MS} ms, plus a round trip)`,
    );
    t.comment(`owner death noticed by the stream after ${detectedMs.toFixed(0)} ms (ping every ${PING_MS} ms)`);

    const callError = await inFlight;
    const callMs = performance.now() - diedAt;
    t.match(
      callError,
      { name: 'HostUnavailableError', message: /died with the call in flight/ },
      'the call in flight fails as unavailable',
    );
    t.ok(
      callMs <= a.leases.leaseTtlMs + 1_500,
      `${callMs.toFixed(0)} ms after the death, not at its 60 s deadline (lease ${a.leases.leaseTtlMs} ms)`,
    );
    t.comment(`owner death: a call in flight failed after ${callMs.toFixed(0)} ms`);
    // On the "dead" owner the turn still waits for the tool's answer: ended here, else the file's teardown waits
    // out the link server's close (2 s) and the runtime's drain (SHUTDOWN_TIMEOUT_MS, 10 s) for it.
    t.equal(await c.runtime.signal(CHAT, waiting, { type: 'abort', userDid }), true, 'the waiting turn is stopped');
  },
);
