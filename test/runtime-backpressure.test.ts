// Backpressure and cancellation in the actor runtime: bounded mailboxes and host queues answer at once, a call
// whose caller gave up does not commit, signals never wake an actor, and a stop drains hosts before closing.
// Slow actors are real ones: a chat turn waits on the local model stand-in, which holds its answer until released.
import t from 'tap';
import type { Test } from 'tap';
import { loadConfig } from '../dist/src/app/config.js';
import { ActorHost, type Actor, type HostContext } from '../dist/src/runtime/actor-host.js';
import { Mailbox } from '../dist/src/runtime/mailbox.js';
import { CHAT_ACTOR, type TurnMessage } from '../dist/src/oracle/chat/chat-protocol.js';
import { openLmdbTranscriptRepository } from '../dist/src/oracle/sessions/lmdb-transcript-repository.js';
import { chunk, heldAnswer, sse, startLlmStandIn, type LlmStandIn } from './oracle-agent-llm-stand-in.js';
import { call, createSession, newUser, startOracleServer, type OracleServer, type User } from './helpers/oracle.js';
import { postUssd } from './helpers/ussd-gateway.js';

const UNAVAILABLE = 'END Service temporarily unavailable. Please try again later.';

/** A model answer given at once. */
const answer = (text: string) => sse([chunk({ content: text }), chunk({ content: 'and the rest.' }, 'stop')]);

async function oracleWith(
  t: Test,
  env: Record<string, string>,
): Promise<{ llm: LlmStandIn; server: OracleServer; ada: User }> {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const server = await startOracleServer(t, { env: { LLM_BASE_URL: llm.baseUrl, ...env } });
  return { llm, server, ada: await newUser(server.oracleDid) };
}

function turn(server: OracleServer, user: User, message: string): TurnMessage {
  const turnId = `turn-${message}`;
  return {
    type: 'turn',
    oracleDid: server.oracleDid,
    oracleName: 'Test Oracle',
    userDid: user.did,
    turnId,
    requestId: turnId,
    message,
  };
}

async function transcript(server: OracleServer, user: User, sessionId: string): Promise<string[]> {
  const res = await call(server, 'GET', `/messages/${sessionId}`, { user });
  return res.body.messages.map((m: { type: string; content: string }) => `${m.type}: ${m.content}`);
}

t.test('the limits are validated like every variable', async (t) => {
  t.match(loadConfig({}), { ACTOR_MAILBOX_LIMIT: 100, ACTOR_HOST_QUEUE_LIMIT: 10_000 });
  t.throws(() => loadConfig({ ACTOR_MAILBOX_LIMIT: '0' }), /ACTOR_MAILBOX_LIMIT="0": must be at least 1/);
  t.throws(
    () => loadConfig({ ACTOR_HOST_QUEUE_LIMIT: 'lots' }),
    /ACTOR_HOST_QUEUE_LIMIT="lots": must be a whole number/,
  );
});

t.test('units: a bounded mailbox refuses at once; a task whose signal fires leaves unrun', async (t) => {
  const mailbox = new Mailbox(2);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const ran: string[] = [];
  const first = mailbox.post(async () => {
    await gate;
    ran.push('first');
  });
  const controller = new AbortController();
  const second = mailbox.post(() => void ran.push('second'), controller.signal);
  await t.rejects(
    mailbox.post(() => ran.push('third')),
    { name: 'ActorBusyError' },
    'the third is refused while two are held',
  );
  controller.abort();
  await t.rejects(second, /cancelled|abort/i, 'the queued task leaves when its signal fires');
  t.equal(mailbox.pending, 1);
  const fourth = mailbox.post(() => void ran.push('fourth'));
  release();
  await Promise.all([first, fourth, mailbox.drained()]);
  t.same(ran, ['first', 'fourth'], 'the cancelled task never ran');
  t.equal(mailbox.pending, 0);
});

t.test('units: a signal does not wake an actor; close drains, runs afterClose, then refuses', async (t) => {
  const created: string[] = [];
  const committed: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const kind = {
    name: 'slow',
    create(id: string): Actor {
      created.push(id);
      return {
        async receive(message: unknown, cancelled?: AbortSignal) {
          await gate;
          cancelled?.throwIfAborted();
          committed.push(String(message));
          return message;
        },
        signal: () => true,
      };
    },
  };
  const debug: string[] = [];
  const log = { debug: (_: unknown, text: string) => debug.push(text) } as unknown as HostContext['log'];
  let storeClosed = false;
  const host = new ActorHost([kind], { log } as HostContext, 60_000, {
    afterClose: async () => void (storeClosed = true),
  });
  t.equal(await host.signal('slow', 'absent', {}), undefined, 'not delivered');
  t.same(created, [], 'the actor was not created for a signal');
  t.same(debug, ['signal not delivered: actor not in memory']);

  // A deadline's timer keeps no thread alive (a real host's ports do): this test waits for two.
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  const kept = host.send('slow', 'a', 'kept');
  const dropped = host.send('slow', 'a', 'dropped', Date.now() + 50);
  const running = host.send('slow', 'b', 'running', Date.now() + 20);
  await t.rejects(dropped, { name: 'DeadlineExceededError' }, 'a queued call leaves the mailbox at its deadline');
  const closing = host.close(10_000);
  await t.rejects(host.send('slow', 'c', 'new'), { name: 'HostClosingError' }, 'a closing host takes nothing new');
  t.notOk(storeClosed, 'LMDB stays open while work is in flight');
  release();
  t.equal(await kept, 'kept', 'the in-flight answer completes');
  await t.rejects(
    running,
    { name: 'DeadlineExceededError' },
    'a running call past its deadline fails at its commit check, with the deadline as the reason',
  );
  t.same(await closing, { drained: true });
  t.ok(storeClosed);
  t.same(committed, ['kept'], 'neither cancelled call committed');
});

t.test('through HTTP: one server with ACTOR_MAILBOX_LIMIT=2', async (t) => {
  const { llm, server, ada } = await oracleWith(t, { ACTOR_MAILBOX_LIMIT: '2' });

  await t.test(
    'a burst on one USSD session: the overflow answers the END text at once; the server stays healthy',
    async (t) => {
      const dial = { sessionId: 'burst', serviceCode: '*384*123#', phoneNumber: '+254700000009', text: '' };
      const answers = await Promise.all(Array.from({ length: 24 }, () => postUssd(server.url, dial)));
      t.ok(
        answers.every((a) => a.status === 200),
        'all 200 (a gateway ends the session on any other status)',
      );
      const refused = answers.filter((a) => a.body === UNAVAILABLE).length;
      t.ok(refused > 0, `${refused} of 24 refused while the session's mailbox was full`);
      t.ok(answers.filter((a) => a.body.startsWith('CON ')).length >= 1, 'the ones accepted were answered');
      t.ok(answers.every((a) => a.body === UNAVAILABLE || a.body.startsWith('CON ')));
      t.match(
        (await postUssd(server.url, { ...dial, sessionId: 'after-burst' })).body,
        /^CON /,
        'a new session is served',
      );
      t.equal((await fetch(`${server.url}/health`)).status, 200);
    },
  );

  await t.test(
    'a timed-out call is cancelled: the running turn and the one queued behind it commit nothing',
    async (t) => {
      const sessionId = await createSession(server, ada);
      const held = heldAnswer('Partial ');
      llm.script(held.responder);
      const modelCalls = llm.requests.length;
      const actor = server.runtime.ref(CHAT_ACTOR, sessionId);
      const sentAt = performance.now();
      const running = actor.send(turn(server, ada, 'running'), 3_000);
      const queued = actor.send(turn(server, ada, 'queued'), 300);
      const deadlineExceeded = { name: 'DeadlineExceededError', code: 'deadline_exceeded' };
      await t.rejects(queued, deadlineExceeded, 'the queued call fails at its deadline');
      await held.running;
      await t.rejects(running, deadlineExceeded, 'the caller is told it failed, with the deadline as the reason');
      const waited = performance.now() - sentAt;
      // One deadline: the caller is answered at it, not a grace later (the host's own answer, the same, comes then).
      t.ok(waited >= 2_990 && waited < 4_000, `answered at the deadline (${waited.toFixed(0)} ms of 3000)`);
      await held.closed; // the host cancelled the turn at the same deadline: it stopped its model request
      held.release();
      // A message through HTTP runs after both in the same mailbox: whatever they were going to commit is done by then.
      llm.script(answer('Fine '));
      const res = await call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: 'after' } });
      t.equal(res.status, 200);
      t.same(
        await transcript(server, ada, sessionId),
        ['human: after', 'ai: Fine and the rest.'],
        'only the turn whose caller waited is stored',
      );
      t.equal(llm.requests.length, modelCalls + 2, 'the queued turn never reached the model');
    },
  );

  await t.test(
    'stop drains the hosts: an in-flight answer completes, then LMDB closes and the threads end',
    async (t) => {
      const sessionId = await createSession(server, ada);
      const held = heldAnswer('Hello ');
      llm.script(held.responder);
      const inFlight = call(server, 'POST', `/messages/${sessionId}`, { user: ada, body: { message: 'in flight' } });
      await held.running;
      let stopped = false;
      const stopping = server.runtime.stop().then((closed) => {
        stopped = true;
        return closed;
      });
      const refused = await postUssd(server.url, {
        sessionId: 'during-stop',
        serviceCode: '*384*123#',
        phoneNumber: '+254700000010',
        text: '',
      });
      t.equal(refused.body, UNAVAILABLE, 'a stopping runtime takes no new work');
      t.notOk(stopped, 'the stop waits for the work in flight');
      held.release();
      const res = await inFlight;
      t.equal(res.status, 200);
      t.equal(res.body.message.content, 'Hello and the rest.', 'the in-flight answer completed');
      t.same(
        await stopping,
        [{ host: 0, drained: true }],
        'the host drained and closed its LMDB before it was terminated',
      );
      t.notOk(server.runtime.isHostAlive(0));
      // The actors are gone with their hosts (reads go through them), so the commit is read from LMDB itself.
      const stored = await openLmdbTranscriptRepository(server.store).read(sessionId, { from: 0, limit: 10 });
      t.same(
        stored.entries.map((m) => `${m.type}: ${m.content}`),
        ['human: in flight', 'ai: Hello and the rest.'],
        'the in-flight turn was committed',
      );
    },
  );
});

t.test(
  'through HTTP: a full host queue (ACTOR_HOST_QUEUE_LIMIT=1) answers 503 + Retry-After and the USSD END text',
  async (t) => {
    const { llm, server, ada } = await oracleWith(t, { ACTOR_HOST_QUEUE_LIMIT: '1' });
    const [busy, other] = [await createSession(server, ada), await createSession(server, ada)];
    const held = heldAnswer('Working ');
    llm.script(held.responder);
    const first = call(server, 'POST', `/messages/${busy}`, { user: ada, body: { message: 'slow one' } });
    await held.running;

    const started = Date.now();
    const refused = await call(server, 'POST', `/messages/${other}`, { user: ada, body: { message: 'no room' } });
    t.equal(refused.status, 503);
    t.equal(refused.headers.get('retry-after'), '1');
    t.same(refused.body, {
      statusCode: 503,
      message: 'The chat service is busy; try again in a moment',
      error: 'Service Unavailable',
    });
    const dial = { sessionId: 'queue-full', serviceCode: '*384*123#', phoneNumber: '+254700000011', text: '' };
    t.equal((await postUssd(server.url, dial)).body, UNAVAILABLE);
    t.ok(Date.now() - started < 2_000, `both refused at once (${Date.now() - started} ms), not after a timeout`);
    t.equal((await fetch(`${server.url}/health`)).status, 200, 'the server stays healthy');

    held.release();
    t.equal((await first).body.message.content, 'Working and the rest.', 'the held turn completes');
    t.match((await postUssd(server.url, dial)).body, /^CON /, 'served again once the queue has room');
    llm.script(answer('Now '));
    t.equal((await call(server, 'POST', `/messages/${other}`, { user: ada, body: { message: 'again' } })).status, 200);
  },
);
