// The live-call routes through the real server: POST /calls/:id/sync, PATCH /calls/:id/update,
// GET /calls/session/:sessionId (UCAN) and GET /calls/:id/key (x-api-key). First as @ixo/oracles-client-sdk 1.4.0
// calls them, through its own provider's authedRequest (useLiveAgent's sync with no body, then useLiveKitAgent's
// updates: active on start, ended on end), then each route's answers, auth failures, another user's calls, and
// bad input (always a 4xx in the wire format, never a 5xx).
import { useOraclesContext } from '@ixo/oracles-client-sdk';
import t from 'tap';
import { call, createSession, newUser, startOracleServer, type User } from './helpers/oracle.js';
import { sdkUser } from './helpers/sdk-client.js';
import { mountHook, onlyTo } from './helpers/sdk-hooks.js';

const LIVE_KEY = 'live-agent-key-0123456789abcdef';
const server = await startOracleServer(t, { env: { LIVE_AGENT_AUTH_API_KEY: LIVE_KEY } });
const ada = await newUser(server.oracleDid);
const bob = await newUser(server.oracleDid);

let calls = 0;
/** A call id as the SDK builds it: `${event.event_id}@${roomId}` (Matrix ids, sent in the path unencoded). */
const callId = () => `$Rqnc-F-dvnEYJTyHq_iKxU2bZ${++calls}CI92-kuZq3a5lr5Zg@!OGEhHVWSdvArJzumhm:matrix.ixo.earth`;
/** The live agent's read; `null`: without the header. */
const key = (id: string, apiKey: string | null = LIVE_KEY) =>
  call(server, 'GET', `/calls/${id}/key`, apiKey === null ? {} : { headers: { 'x-api-key': apiKey } });
const sync = (user: User | undefined, id: string, body?: unknown) =>
  call(server, 'POST', `/calls/${id}/sync`, { ...(user ? { user } : {}), body });
const update = (user: User | undefined, id: string, body: unknown) =>
  call(server, 'PATCH', `/calls/${id}/update`, { ...(user ? { user } : {}), body });

t.test("SDK 1.4.0's own requests: sync with no body, then active, then ended", async (t) => {
  onlyTo(t, server.url);
  const user = await sdkUser(server.oracleDid);
  const hook = mountHook(t, user, () => useOraclesContext());
  const { authedRequest } = await hook.until((context) => typeof context.authedRequest === 'function', 'a context');
  const id = callId();
  // useLiveAgent's callAgent: `authedRequest(`${apiUrl}/calls/${callId}/sync`, 'POST', {}, oracleDid)`.
  t.same(await authedRequest(`${server.url}/calls/${id}/sync`, 'POST', {}, server.oracleDid), { callId: id });
  // useLiveKitAgent's updateCall, from startCall and then endCall:
  // `body: JSON.stringify({ callStatus, callStartedAt, callEndedAt })`, the one not given left undefined.
  const startedAt = new Date().toISOString();
  const patch = (body: Record<string, unknown>) =>
    authedRequest(`${server.url}/calls/${id}/update`, 'PATCH', { body: JSON.stringify(body) }, server.oracleDid);
  t.same(await patch({ callStatus: 'active', callStartedAt: startedAt, callEndedAt: undefined }), {
    callId: id,
    callStatus: 'active',
    callStartedAt: startedAt,
  });
  const endedAt = new Date(Date.parse(startedAt) + 1500).toISOString();
  t.same(await patch({ callStatus: 'ended', callStartedAt: undefined, callEndedAt: endedAt }), {
    callId: id,
    callStatus: 'ended',
    callStartedAt: startedAt,
    callEndedAt: endedAt,
  });
  // Its request() reads a refusal's statusCode and message from the body.
  const refused = await patch({ callStatus: 'active' }).catch((error: unknown) => error);
  t.match(refused, { name: 'RequestError', status: 409, message: /cannot change from 'ended' to 'active'/ });
  // Synced without a body, the call has no session and no media key: the live agent's read says so.
  t.match(await key(id), { status: 404, body: { statusCode: 404, message: /without an encryption key/ } });
});

t.test('sync with the call event content: listed in its session, its key served to the live agent', async (t) => {
  const sessionId = await createSession(server, ada);
  const id = callId();
  const content = {
    type: 'm.ixo.oracles_call',
    callType: 'video',
    callStatus: 'pending',
    callStartedAt: '2026-01-01T10:00:00.000Z',
    encryptionKey: 'ZW5jcnlwdGVkLWtleQ==',
    sessionId,
    oracleDid: 'did:ixo:ignored',
    userDid: bob.did,
    agentVoice: 'alloy',
    language: 'en',
  };
  t.match(await sync(ada, id, content), { status: 201, body: { callId: id } });
  t.match(await sync(ada, id, content), { status: 201, body: { callId: id } }, 'a repeated sync is the same');
  const listed = await call(server, 'GET', `/calls/session/${sessionId}`, { user: ada });
  t.equal(listed.status, 200);
  t.same(listed.body, {
    calls: [
      {
        id,
        type: 'm.ixo.oracles_call',
        userDid: ada.did,
        sessionId,
        callType: 'video',
        callStatus: 'pending',
        agentVoice: 'alloy',
        language: 'en',
      },
    ],
  });
  t.same((await key(id)).body, { encryptionKey: content.encryptionKey, oracleDid: server.oracleDid, userDid: ada.did });
  t.match(await sync(ada, id, { ...content, callType: 'audio' }), {
    status: 409,
    body: { message: /callType differs/ },
  });
  t.match(await update(ada, id, { callStatus: 'active' }), { status: 200, body: { callStatus: 'active' } });
  const after = await call(server, 'GET', `/calls/session/${sessionId}`, { user: ada });
  t.match(after.body.calls[0], { callStatus: 'active', callStartedAt: String });
  t.notOk('encryptionKey' in after.body.calls[0], 'the list leaves the media key out');
  t.match(
    await call(server, 'GET', '/calls/session/key', { user: ada }),
    { status: 404, body: { message: 'Session not found' } },
    'a session named `key` is listed, not read as a call id',
  );
  const empty = await createSession(server, ada);
  t.same((await call(server, 'GET', `/calls/session/${empty}`, { user: ada })).body, { calls: [] });
});

t.test('transitions: pending -> active -> ended, a repeat changes nothing, nothing after ended', async (t) => {
  const id = callId();
  await sync(ada, id);
  t.match(await update(ada, id, { callStartedAt: '2026-01-01T10:00:00.000Z' }), {
    status: 400,
    body: { message: 'Cannot set callStartedAt for pending calls' },
  });
  t.match(await update(ada, id, { callStatus: 'active', callStartedAt: '2026-01-01T10:00:00.000Z' }), { status: 200 });
  t.match(await update(ada, id, { callStatus: 'active' }), {
    status: 200,
    body: { callStartedAt: '2026-01-01T10:00:00.000Z' },
  });
  t.match(await update(ada, id, { callEndedAt: '2026-01-01T10:05:00.000Z' }), {
    status: 400,
    body: { message: 'Cannot set callEndedAt for non-ended calls' },
  });
  t.match(await update(ada, id, { callStatus: 'ended', callEndedAt: '2026-01-01T09:59:00.000Z' }), {
    status: 400,
    body: { message: 'callEndedAt must not be before callStartedAt' },
  });
  t.match(await update(ada, id, { callStatus: 'ended', callEndedAt: '2026-01-01T10:05:00.000Z' }), {
    status: 200,
    body: { callStatus: 'ended', callEndedAt: '2026-01-01T10:05:00.000Z' },
  });
  t.match(await update(ada, id, { callStatus: 'active' }), {
    status: 409,
    body: { statusCode: 409, error: 'Conflict' },
  });
  const never = callId();
  await sync(ada, never);
  t.match(await update(ada, never, { callStatus: 'ended' }), {
    status: 200,
    body: { callStatus: 'ended', callEndedAt: String },
  });
  t.match(await update(ada, callId(), { callStatus: 'active' }), { status: 404, body: { message: 'Call not found' } });
});

t.test("another user's call: not found to update, taken to sync, its session not theirs to list", async (t) => {
  const sessionId = await createSession(server, ada);
  const id = callId();
  await sync(ada, id, { sessionId, encryptionKey: 'k' });
  t.match(await update(bob, id, { callStatus: 'active' }), { status: 404, body: { message: 'Call not found' } });
  t.match(await sync(bob, id), { status: 409, body: { message: 'This call id is already synced by another user' } });
  t.match(await sync(bob, callId(), { sessionId }), { status: 404, body: { message: /not found/i } });
  t.match(await call(server, 'GET', `/calls/session/${sessionId}`, { user: bob }), { status: 404 });
  t.match((await key(id)).body, { userDid: ada.did }, 'the call stayed unchanged and Ada’s');
  t.match(await update(ada, id, { callStatus: 'active' }), { status: 200 });
});

t.test('no UCAN: 401 on the user routes; the key route takes x-api-key only', async (t) => {
  const id = callId();
  for (const answer of [
    await sync(undefined, id),
    await update(undefined, id, { callStatus: 'active' }),
    await call(server, 'GET', '/calls/session/some-session'),
  ])
    t.match(answer, { status: 401, body: { statusCode: 401, error: 'Unauthorized' } });
  await sync(ada, id, { encryptionKey: 'k' });
  t.match(await key(id, null), { status: 401, body: { message: /Missing API key/ } });
  t.match(await key(id, 'live-agent-key-0123456789abcdeX'), { status: 401, body: { message: 'Invalid API key' } });
  t.match(await call(server, 'GET', `/calls/${id}/key`, { user: ada }), { status: 401 }, 'a UCAN is no API key');
  t.match(await key('no-at-sign'), { status: 400 }, 'the key first, then the id');
  t.match(await key(callId()), { status: 404, body: { message: 'Call not found' } });
});

t.test('bad input: a 400 that names the problem, never a 5xx', async (t) => {
  const id = callId();
  await sync(ada, id);
  const cases: [string, unknown, RegExp][] = [
    ['{}', {}, /callStatus, callStartedAt or callEndedAt/],
    ['an unknown status', { callStatus: 'paused' }, /callStatus must be one of active, ended/],
    ['pending', { callStatus: 'pending' }, /callStatus must be one of active, ended/],
    ['a timestamp that is none', { callStartedAt: 'yesterday' }, /callStartedAt must be an ISO 8601 timestamp/],
    ['a number', { callEndedAt: 1767261600000 }, /callEndedAt must be a string/],
    ['an unknown field', { callStatus: 'active', note: 'x' }, /body must be a JSON object with only/],
    ['an array', [{ callStatus: 'active' }], /body must be a JSON object/],
    ['JSON that is not', '{"callStatus":', /Malformed JSON body/],
  ];
  for (const [what, body, message] of cases) {
    const answer = await update(ada, id, body);
    t.equal(answer.status, 400, what);
    t.match(JSON.stringify(answer.body.message), message, what);
  }
  const syncCases: [string, unknown, RegExp][] = [
    ['an unknown call type', { callType: 'hologram' }, /callType must be one of audio, video/],
    ['an oversized key', { encryptionKey: 'k'.repeat(4097) }, /encryptionKey must be at most 4096 characters/],
    ['an empty session', { sessionId: '' }, /sessionId should not be empty/],
    ['a string', '"sync"', /body must be a JSON object/],
  ];
  for (const [what, body, message] of syncCases) {
    const answer = await sync(ada, callId(), body);
    t.equal(answer.status, 400, what);
    t.match(JSON.stringify(answer.body.message), message, what);
  }
  for (const bad of ['no-at-sign', 'a@b@c', `${'x'.repeat(300)}@${'y'.repeat(300)}`, '%24a%7Cb@!r:x'])
    t.match(await sync(ada, bad), { status: 400, body: { message: [/callId must/] } }, bad);
  t.match(await sync(ada, '%24ev%3Aexample.org@%21room%3Aexample.org'), { status: 201 }, 'an encoded id is decoded');
  t.match(await update(ada, '$ev:example.org@!room:example.org', { callStatus: 'active' }), { status: 200 });
});

t.test('a session holds at most 100 calls of its user', async (t) => {
  const sessionId = await createSession(server, ada);
  for (let i = 0; i < 100; i++) {
    const answer = await sync(ada, callId(), { sessionId });
    if (answer.status !== 201) t.fail(`sync ${i} answered ${answer.status}`);
  }
  t.match(await sync(ada, callId(), { sessionId }), {
    status: 409,
    body: { message: 'A session holds at most 100 calls' },
  });
  t.equal((await call(server, 'GET', `/calls/session/${sessionId}`, { user: ada })).body.calls.length, 100);
  const other = await createSession(server, ada);
  t.match(await sync(ada, callId(), { sessionId: other }), { status: 201 }, 'another session has room');
});

t.test('the routes are in the OpenAPI document with their security', async (t) => {
  const doc: any = await (await fetch(`${server.url}/docs-json`)).json();
  t.match(doc.paths['/calls/{callId}/sync'].post, { security: [{ bearerAuth: [] }, { ucanDelegation: [] }] });
  t.ok(doc.paths['/calls/{callId}/update'].patch.requestBody);
  t.match(doc.paths['/calls/session/{sessionId}'].get.responses, { 200: {}, 404: {} });
  t.same(doc.paths['/calls/{callId}/key'].get.security, [{ apiKey: [] }]);
});

t.test('without LIVE_AGENT_AUTH_API_KEY the key route refuses everyone, saying why', async (t) => {
  const plain = await startOracleServer(t);
  const user = await newUser(plain.oracleDid);
  const id = callId();
  t.match(await call(plain, 'POST', `/calls/${id}/sync`, { user, body: { encryptionKey: 'k' } }), { status: 201 });
  for (const headers of [{}, { 'x-api-key': LIVE_KEY }, { 'x-api-key': '' }] as Record<string, string>[])
    t.match(await call(plain, 'GET', `/calls/${id}/key`, { headers }), {
      status: 403,
      body: { statusCode: 403, message: 'Live-agent access is off: LIVE_AGENT_AUTH_API_KEY is not set' },
    });
});
