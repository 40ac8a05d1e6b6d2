// The built-in agent: preference requests go through the real set_user_preferences tool path into LMDB,
// and the next turn's system prompt (and reply) carries them.
import t from 'tap';
import { openLmdbOracleRepositories } from '../dist/src/oracle/repositories.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../dist/src/store/env.js';
import { createPlugins } from '../dist/src/oracle/plugins/index.js';
import { prepareTurn } from '../dist/src/oracle/actor/agent/turn.js';
import { runAgent } from '../dist/src/oracle/actor/agent/run.js';
import { builtinProvider } from '../dist/src/oracle/actor/agent/builtin-provider.js';
import { readIntent, readPreferenceRequest } from '../dist/src/oracle/actor/agent/builtin-intents.js';
import { buildSystemPrompt, readPreferencesSection } from '../dist/src/oracle/actor/agent/system-prompt.js';
import { encodeSseFrame, SseFrameBuilder } from '../dist/src/oracle/sse-frames.js';
import type { AgentResult, ChatMessage, TurnContext } from '../dist/src/oracle/chat/agent-types.js';

const config = { CREDITS_ENABLED: false, CREDITS_INITIAL: 10, CREDITS_PER_MESSAGE: 1 };
const ORACLE = 'did:key:zOracle';

// mkdtemp, not t.testdir(): lmdb treats a path whose last segment has a dot (".test.ts-...") as a file.
function tempStore(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'oracle-agent-'));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

t.test('preference requests are recognised', async (t) => {
  t.same(readPreferenceRequest('call me Ada'), { userName: 'Ada' });
  t.same(readPreferenceRequest('Please call me "Mary Ann" from now on.'), { userName: 'Mary Ann' });
  t.same(readPreferenceRequest('Call yourself Sage and reply in French, and be more formal!'), {
    agentName: 'Sage',
    language: 'French',
    formality: 'formal',
  });
  t.same(readPreferenceRequest('could you be more CASUAL?'), { formality: 'casual' });
  t.same(
    readPreferenceRequest('call me Alexander please'),
    { userName: 'Alexander' },
    '"and" inside a name is not a separator',
  );
  t.same(readPreferenceRequest('what is the weather?'), {});
  t.same(readIntent('use my_tool {"a":1}'), { type: 'use-tool', toolName: 'my_tool', argsText: '{"a":1}' });
  t.same(readIntent('hello'), { type: 'chat' });
});

t.test('the system prompt carries a User Preferences section that reads back', async (t) => {
  const prompt = buildSystemPrompt({
    oracleName: 'Test Oracle',
    preferences: {
      userName: 'Ada',
      agentName: 'Sage',
      formality: 'formal',
      customInstructions: 'Short\nanswers.',
      updatedAt: 'x',
    },
    timezone: 'Africa/Nairobi',
    now: new Date('2025-06-01T12:00:00Z'),
  });
  t.match(prompt, /^You are Sage, an AI oracle/);
  t.match(prompt, /\(Africa\/Nairobi\)/);
  t.match(
    prompt,
    /## User Preferences\n.*\n- Call the user: Ada\n- Your name: Sage\n- Formality: formal\n- Custom instructions: Short answers\./,
  );
  t.same(readPreferencesSection(prompt), {
    userName: 'Ada',
    agentName: 'Sage',
    formality: 'formal',
    customInstructions: 'Short answers.',
  });
  const plain = buildSystemPrompt({ oracleName: 'Test Oracle', preferences: null, timezone: 'Not/AZone' });
  t.notMatch(plain, /User Preferences/);
  t.match(plain, /^You are Test Oracle/);
  t.match(plain, /\(UTC\)/, 'an unknown time zone falls back to UTC');
});

t.test('preferences set in one session reach the first turn of the next, through the real tool path', async (t) => {
  const store = tempStore(t);
  const plugins = createPlugins({ config, repositories: openLmdbOracleRepositories(store) });
  const provider = builtinProvider();

  async function turn(userDid: string, sessionId: string, history: ChatMessage[], message: string) {
    const context: TurnContext = {
      userDid,
      oracleDid: ORACLE,
      sessionId,
      requestId: `req-${sessionId}`,
      signal: new AbortController().signal,
    };
    const prepared = await prepareTurn({ plugins, context, oracleName: 'Test Oracle', history, userMessage: message });
    const frames = new SseFrameBuilder(sessionId, context.requestId);
    const sse: string[] = [encodeSseFrame(frames.start())];
    const result: AgentResult = await runAgent({
      provider,
      messages: prepared.messages,
      tools: prepared.tools,
      context,
      onEvent: (event) => void sse.push(encodeSseFrame(frames.frame(event))),
    });
    for (const frame of frames.end(result)) sse.push(encodeSseFrame(frame));
    return { prepared, result, sse: sse.join('') };
  }

  // Session 1: a plain message, then a preference request.
  const first = await turn('did:key:zAda', 's1', [], 'hello');
  t.match(first.result.text, /^Hello! I'm the built-in assistant of this oracle\. You said: "hello"\./);
  t.same(first.result.toolCalls, []);

  const history = [{ role: 'user', content: 'hello' } as ChatMessage, ...first.result.messages];
  const second = await turn('did:key:zAda', 's1', history, 'Call me Ada, call yourself Sage and be more formal');
  t.same(
    second.result.toolCalls.map((c) => [c.name, c.kind, c.status, c.args]),
    [['set_user_preferences', 'server', 'done', { userName: 'Ada', agentName: 'Sage', formality: 'formal' }]],
  );
  t.equal(second.result.text, "Done: I'll call you Ada, I'll go by Sage, I'll keep a formal tone from now on.");
  t.match(
    second.sse,
    /event: tool_call\ndata: \{[^\n]*"toolName":"toolCall","args":\{[^\n]*"toolName":"set_user_preferences"\}[^\n]*"status":"isRunning"/,
  );
  t.match(second.sse, /event: tool_call\ndata: \{[^\n]*"status":"done"[^\n]*"output":"Saved\./);
  t.match(second.sse, /event: done\ndata: \{"status":"finished"\}\n\n$/);

  // In LMDB, under (user, oracle).
  const saved = store.db<Record<string, unknown>>('oracle-preferences').get(`did:key:zAda|${ORACLE}`);
  t.match(saved, { userName: 'Ada', agentName: 'Sage', formality: 'formal', updatedAt: /^\d{4}-\d\d-\d\dT/ });

  // Session 2, first turn: loaded before the agent is built.
  const next = await turn('did:key:zAda', 's2', [], 'what can you do?');
  t.match(
    next.prepared.systemPrompt,
    /## User Preferences[\s\S]*- Call the user: Ada\n- Your name: Sage\n- Formality: formal/,
  );
  t.match(next.result.text, /^Good day, Ada\. I am Sage\. You said: "what can you do\?"/);

  // A language request merges into the record; the other fields stay.
  await turn('did:key:zAda', 's2', [], 'reply in Swahili');
  const merged = await turn('did:key:zAda', 's3', [], 'hi');
  t.match(
    merged.result.text,
    /^Good day, Ada\. I am Sage\. \(You asked for replies in Swahili; the built-in agent writes English only\.\)/,
  );

  // Another user of the same oracle sees nothing of Ada's.
  const other = await turn('did:key:zBob', 's4', [], 'hi');
  t.match(other.result.text, /^Hello! I'm the built-in assistant/);
  t.notMatch(other.prepared.systemPrompt, /User Preferences/);
});

t.test('an invalid preference is refused by the tool and the agent says so; nothing is saved', async (t) => {
  const store = tempStore(t);
  const plugins = createPlugins({ config, repositories: openLmdbOracleRepositories(store) });
  const context: TurnContext = {
    userDid: 'did:key:zLong',
    oracleDid: ORACLE,
    sessionId: 's',
    requestId: 'r',
    signal: new AbortController().signal,
  };
  const prepared = await prepareTurn({
    plugins,
    context,
    oracleName: 'O',
    history: [],
    userMessage: 'reply in the language of the ancient mountain people',
  });
  const result = await runAgent({
    provider: builtinProvider(),
    messages: prepared.messages,
    tools: prepared.tools,
    context,
  });
  t.same(
    result.toolCalls.map((c) => [c.name, c.status]),
    [['set_user_preferences', 'error']],
  );
  t.equal(result.text, "I couldn't save your preferences: Invalid preferences: language must be at most 20 characters");
  t.equal(store.db('oracle-preferences').get(`did:key:zLong|${ORACLE}`), undefined);
});

t.test('without the preferences tool the built-in agent says it cannot save', async (t) => {
  const result = await runAgent({
    provider: builtinProvider(),
    messages: [{ role: 'user', content: 'call me Ada' }],
    tools: [],
    context: { userDid: 'u', oracleDid: 'o', sessionId: 's', requestId: 'r', signal: new AbortController().signal },
  });
  t.equal(result.text, "I can't save preferences here: the preferences tool is not available.");
});

t.test('the built-in agent stops at abort between deltas', async (t) => {
  const controller = new AbortController();
  let deltas = 0;
  const result = await runAgent({
    provider: builtinProvider(),
    messages: [{ role: 'user', content: 'a long enough message to stream several words' }],
    tools: [],
    context: { userDid: 'u', oracleDid: 'o', sessionId: 's', requestId: 'r', signal: controller.signal },
    onEvent: (event) => {
      if (event.type === 'message' && ++deltas === 2) controller.abort();
    },
  });
  t.equal(result.aborted, true);
  t.equal(deltas, 2);
  t.same(
    result.messages.map((m) => m.role),
    ['assistant'],
    'the partial answer is kept',
  );
});
