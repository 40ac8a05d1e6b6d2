// The user-preferences plugin: validation, merging writes in LMDB, the set_user_preferences tool, and
// GET /user-preferences served by the real uWebSockets.js front door.
import t from 'tap';
import { frontDoor } from './helpers/engine.js';
import { openLmdbOracleRepositories } from '../dist/src/oracle/repositories.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../dist/src/store/env.js';
import { Router } from '../dist/src/http/router.js';
import { httpErrors } from '../dist/src/http/errors.js';
import { createLogger } from '../dist/src/base/log.js';
import { createPluginFronts, pluginAuthExcludedRoutes, pluginRoutes } from '../dist/src/oracle/plugins/front.js';
import { createPlugins, pluginTools, runBeforeAgent } from '../dist/src/oracle/plugins/index.js';
import { mountRoutes } from '../dist/src/http/route.js';
import { refuseInput } from '../dist/src/oracle/errors.js';
import {
  parsePreferencesUpdate,
  preferencesUpdateJsonSchema,
} from '../dist/src/oracle/plugins/user-preferences/schema.js';
import { preferencesStore } from '../dist/src/oracle/plugins/user-preferences/store.js';
import { openLmdbPreferences } from '../dist/src/oracle/plugins/user-preferences/lmdb-repository.js';
import type { HttpRequest } from '../dist/src/http/types.js';
import type { TurnContext } from '../dist/src/oracle/chat/agent-types.js';
import type { AuthIdentity } from '../dist/src/oracle/auth/index.js';

const config = { CREDITS_ENABLED: false, CREDITS_INITIAL: 10, CREDITS_PER_MESSAGE: 1 };
const ORACLE = 'did:key:zOracle';

// mkdtemp, not t.testdir(): lmdb treats a path whose last segment has a dot (".test.ts-...") as a file.
function tempStore(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'oracle-prefs-'));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

const turn = (userDid: string, oracleDid = ORACLE): TurnContext => ({
  userDid,
  oracleDid,
  sessionId: 's',
  requestId: 'r',
  signal: new AbortController().signal,
});

t.test('validation: limits, the formality enum, at least one field, unknown keys dropped', async (t) => {
  t.same(parsePreferencesUpdate({ userName: '  Ada ', agentName: 'Sage', formality: 'semi-formal', other: 1 }), {
    ok: true,
    value: { userName: 'Ada', agentName: 'Sage', formality: 'semi-formal' },
  });
  t.same(parsePreferencesUpdate({ agentName: 'x'.repeat(81), userName: 'y'.repeat(81), language: 'z'.repeat(21) }), {
    ok: false,
    issues: [
      'agentName must be at most 80 characters',
      'userName must be at most 80 characters',
      'language must be at most 20 characters',
    ],
  });
  t.ok(
    parsePreferencesUpdate({
      agentName: 'x'.repeat(80),
      language: 'z'.repeat(20),
      customInstructions: 'c'.repeat(2000),
    }).ok,
    'limits are inclusive',
  );
  t.same(parsePreferencesUpdate({ customInstructions: 'c'.repeat(2001) }), {
    ok: false,
    issues: ['customInstructions must be at most 2000 characters'],
  });
  t.same(parsePreferencesUpdate({ formality: 'rude' }), {
    ok: false,
    issues: [
      'formality must be one of casual, friendly, neutral, semi-formal, professional, formal, technical, academic',
    ],
  });
  t.same(parsePreferencesUpdate({ tone: 42 }), { ok: false, issues: ['tone must be a string'] });
  t.same(parsePreferencesUpdate({}), { ok: false, issues: ['give at least one preference to change'] });
  t.same(
    parsePreferencesUpdate({ updatedAt: '2020-01-01T00:00:00Z' }),
    { ok: false, issues: ['give at least one preference to change'] },
    'updatedAt is set by the server only',
  );
  t.notOk(parsePreferencesUpdate('call me Ada').ok);
  t.notOk(parsePreferencesUpdate(null).ok);
});

t.test('the tool schema is JSON schema of the same fields', async (t) => {
  t.equal(preferencesUpdateJsonSchema.type, 'object');
  t.notOk('$schema' in preferencesUpdateJsonSchema);
  t.same(Object.keys(preferencesUpdateJsonSchema.properties as object).sort(), [
    'agentName',
    'customInstructions',
    'formality',
    'language',
    'tone',
    'userName',
  ]);
  t.match(preferencesUpdateJsonSchema.properties, {
    agentName: { anyOf: [{ type: 'string', maxLength: 80 }, { type: 'null' }] },
  });
});

t.test('writes merge per (user, oracle); null removes a field; updatedAt is the server time', async (t) => {
  const prefs = preferencesStore(openLmdbPreferences(tempStore(t)));
  t.equal(await prefs.get('did:key:zA', ORACLE), null);
  const before = Date.now();
  const first = await prefs.merge('did:key:zA', ORACLE, { userName: 'Ada', language: 'French' });
  t.ok(Date.parse(first.updatedAt) >= before - 1000);
  await prefs.merge('did:key:zA', ORACLE, { formality: 'casual', language: null });
  t.match(await prefs.get('did:key:zA', ORACLE), { userName: 'Ada', formality: 'casual' });
  t.notOk('language' in (await prefs.get('did:key:zA', ORACLE))!, 'null removed it');
  t.equal(await prefs.get('did:key:zA', 'did:key:zOtherOracle'), null, 'per oracle');
  t.equal(await prefs.get('did:key:zB', ORACLE), null, 'per user');

  // Concurrent writes of different fields both land (read and write share a transaction).
  await Promise.all([
    prefs.merge('did:key:zC', ORACLE, { userName: 'Cy' }),
    prefs.merge('did:key:zC', ORACLE, { agentName: 'Bot' }),
    prefs.merge('did:key:zC', ORACLE, { tone: 'dry' }),
  ]);
  t.match(await prefs.get('did:key:zC', ORACLE), { userName: 'Cy', agentName: 'Bot', tone: 'dry' });
});

t.test('the plugin: tool through its execute, and the before-agent load', async (t) => {
  const store = tempStore(t);
  const plugins = createPlugins({ config, repositories: openLmdbOracleRepositories(store) });
  t.same(
    plugins.map((p) => p.name),
    ['user-preferences'],
    'credits off by default',
  );
  t.same(pluginAuthExcludedRoutes(createPluginFronts({ config, repositories: openLmdbOracleRepositories(store) })), []);
  const context = turn('did:key:zA');
  const [tool] = pluginTools(plugins, context);
  t.equal(tool.name, 'set_user_preferences');
  t.equal(tool.kind, 'server');
  const output = await tool.execute({ agentName: 'Sage' }, { ...context, toolCallId: 'c' });
  t.match(output, /^Saved\. The user's preferences are now: \{"agentName":"Sage","updatedAt":"/);
  await t.rejects(tool.execute({ formality: 'loud' }, { ...context, toolCallId: 'c' }), {
    name: 'PreferencesValidationError',
    message: /formality must be one of/,
  });

  await runBeforeAgent(plugins, context);
  t.match(context.preferences, { agentName: 'Sage' });
  const stranger = turn('did:key:zNobody');
  await runBeforeAgent(plugins, stranger);
  t.equal(stranger.preferences, null);
});

t.test('GET /user-preferences through the uWebSockets.js front door', async (t) => {
  const store = tempStore(t);
  // The two halves over one store, as the main thread (routes) and an actor host (the tool) share LMDB.
  const repositories = openLmdbOracleRepositories(store);
  const plugins = createPlugins({ config, repositories });
  const fronts = createPluginFronts({ config, repositories });
  // Stand-in for the UCAN layer (tested by its own suite): the user's DID from a test header, 401 without it.
  const authenticate = async (req: HttpRequest): Promise<AuthIdentity> => {
    const did = req.headers['x-test-user'];
    if (!did) throw httpErrors.unauthorized('Missing UCAN authentication');
    return { did, via: 'invocation', chain: [] };
  };
  const router = new Router();
  mountRoutes(
    router,
    { guards: { ucan: authenticate }, invalid: refuseInput },
    pluginRoutes(fronts, { oracleDid: ORACLE }),
  );
  t.same(
    router.routes.map((r) => [r.method, r.pattern]),
    [['GET', '/user-preferences']],
  );
  t.match(router.routes[0].docs, { tags: ['User preferences'] });

  const server = frontDoor({
    host: '127.0.0.1',
    port: 0,
    bodyLimitBytes: 65536,
    corsOrigin: '*',
    drainQuietMs: 1000,
    streamLimits: { maxBufferBytes: 256 * 1024, stallTimeoutMs: 30_000 },
    rateLimit: { max: 10000, windowSeconds: 60, allowlist: [] },
    log: createLogger('silent'),
  });
  server.mount(router);
  const port = await server.listen();
  t.teardown(async () => {
    await server.drain(1000);
    server.close();
  });
  const get = (user?: string) =>
    fetch(`http://127.0.0.1:${port}/user-preferences`, { headers: user ? { 'x-test-user': user } : {} });

  const none = await get('did:key:zA');
  t.equal(none.status, 200);
  t.match(none.headers.get('content-type'), /application\/json/);
  t.equal(await none.text(), 'null', 'JSON null when nothing is saved');

  await pluginTools(plugins, turn('did:key:zA'))[0].execute(
    { userName: 'Ada', formality: 'formal' },
    { ...turn('did:key:zA'), toolCallId: 'c' },
  );
  const saved = await get('did:key:zA');
  t.equal(saved.status, 200);
  const body: any = await saved.json();
  t.match(body, { userName: 'Ada', formality: 'formal' });
  t.ok(Date.parse(body.updatedAt));
  t.same(Object.keys(body).sort(), ['formality', 'updatedAt', 'userName']);

  t.equal(await (await get('did:key:zB')).text(), 'null', "another user does not see Ada's");

  const anonymous = await get();
  t.equal(anonymous.status, 401);
  t.same(await anonymous.json(), { statusCode: 401, message: 'Missing UCAN authentication', error: 'Unauthorized' });
});
