// GET /models (the SDK's useModels: public, its ModelsResponse) and `model` of a message: the catalogue from
// ORACLE_MODELS / ORACLE_MODELS_FILE (the built-in agent and the OpenAI-compatible server's models), a turn on
// the chosen model reaching the local stand-in under that name, and an unknown model refused with a clear 400.
import t from 'tap';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunk, sse, startLlmStandIn } from './oracle-agent-llm-stand-in.js';
import { startOracleServer } from './helpers/oracle.js';
import { sdkReadAll, sdkSend, sdkUser, type SdkFrame } from './helpers/sdk-client.js';
import { loadModelCatalogue } from '../dist/src/oracle/chat/models.js';

const textOf = (frames: SdkFrame[]) =>
  frames
    .filter((f) => f.event === 'message')
    .map((f) => f.data.content)
    .join('');
const createSession = async (url: string, headers: Record<string, string>) =>
  ((await (await fetch(`${url}/sessions`, { method: 'POST', headers })).json()) as { sessionId: string }).sessionId;

t.test('a catalogue file: the picker sees every model; a message runs on the one it names', async (t) => {
  const llm = await startLlmStandIn();
  t.teardown(() => llm.close());
  const dir = await mkdtemp(join(tmpdir(), 'oracle-models-'));
  const catalogue = {
    default: 'openai/gpt-4o-mini',
    models: [
      { id: 'builtin', provider: 'builtin', label: 'Built-in', costLabel: '$', badge: 'Fast', blurb: 'No network.' },
      {
        id: 'openai/gpt-4o-mini',
        label: 'GPT-4o mini',
        tier: 'everyday',
        badge: 'Fast',
        blurb: 'Cheap.',
        vision: true,
        pricing: { inputPerMillion: 0.18, outputPerMillion: 0.72 },
      },
      {
        id: 'anthropic/claude-big',
        label: 'Claude Big',
        family: 'anthropic',
        tier: 'top',
        costLabel: '$$$',
        badge: 'Smartest',
        pricing: { inputPerMillion: 18, outputPerMillion: 90 },
      },
    ],
  };
  await writeFile(join(dir, 'models.json'), JSON.stringify(catalogue));
  const server = await startOracleServer(t, {
    env: { LLM_BASE_URL: llm.baseUrl, ORACLE_MODELS_FILE: join(dir, 'models.json') },
  });

  const res = await fetch(`${server.url}/models`, { headers: { 'content-type': 'application/json' } });
  t.equal(res.status, 200, 'no UCAN needed');
  const body = (await res.json()) as { models: { id: string; isDefault: boolean }[]; default: string };
  t.equal(body.default, 'openai/gpt-4o-mini');
  t.same(
    body.models.map((m) => m.id),
    ['builtin', 'openai/gpt-4o-mini', 'anthropic/claude-big'],
  );
  t.same(body.models[1], {
    id: 'openai/gpt-4o-mini',
    label: 'GPT-4o mini',
    family: 'openai',
    tier: 'everyday',
    costLabel: '$',
    badge: 'Fast',
    blurb: 'Cheap.',
    vision: true,
    pricing: { inputPerMillion: 0.18, outputPerMillion: 0.72, currency: 'USD', unit: 'per_million_tokens' },
    isDefault: true,
  });
  t.match(body.models[2], { family: 'anthropic', tier: 'top', costLabel: '$$$', vision: false, isDefault: false });
  t.equal(body.models.filter((m) => m.isDefault).length, 1);

  const ada = await sdkUser(server.oracleDid);
  const sessionId = await createSession(server.url, ada.headers());
  llm.script(sse([chunk({ content: 'From the big one.' }, 'stop')]));
  const chosen = await sdkReadAll(
    await sdkSend(server.url, ada, sessionId, { message: 'hi', model: 'anthropic/claude-big' }),
  );
  t.equal(textOf(chosen), 'From the big one.');
  t.equal(llm.requests.at(-1)?.body.model, 'anthropic/claude-big', 'the stand-in was asked for the chosen model');

  llm.script(sse([chunk({ content: 'Default here.' }, 'stop')]));
  await sdkReadAll(await sdkSend(server.url, ada, sessionId, { message: 'and now?' }));
  t.equal(llm.requests.at(-1)?.body.model, 'openai/gpt-4o-mini', 'no model: the default');
  t.equal(llm.requests.length, 2);

  const builtin = await sdkReadAll(
    await sdkSend(server.url, ada, sessionId, { message: 'hello builtin', model: 'builtin' }),
  );
  t.match(textOf(builtin), /You said: "hello builtin"/, 'the built-in agent answered');
  t.equal(llm.requests.length, 2, 'without asking the LLM server');

  const unknown = await fetch(`${server.url}/messages/${sessionId}`, {
    method: 'POST',
    headers: ada.headers(),
    body: JSON.stringify({ message: 'hi', stream: true, model: 'openai/gpt-9' }),
  });
  t.equal(unknown.status, 400);
  t.same(await unknown.json(), {
    statusCode: 400,
    message: 'Unknown model "openai/gpt-9": GET /models lists the models this oracle offers',
    error: 'Bad Request',
  });
  t.equal(llm.requests.length, 2);
});

t.test('without a catalogue: the one model the server runs', async (t) => {
  t.same(loadModelCatalogue({}).response(), {
    models: [
      {
        id: 'builtin',
        label: 'Built-in agent',
        family: 'builtin',
        tier: 'everyday',
        costLabel: '$',
        badge: 'Fast',
        blurb: 'A deterministic agent that runs inside the oracle: no network, no cost.',
        vision: false,
        pricing: { inputPerMillion: 0, outputPerMillion: 0, currency: 'USD', unit: 'per_million_tokens' },
        isDefault: true,
      },
    ],
    default: 'builtin',
  });
  const llmOnly = loadModelCatalogue({ LLM_BASE_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'llama3.1' });
  t.same(
    [llmOnly.defaultId, llmOnly.models[0].provider, llmOnly.models[0].info.label],
    ['llama3.1', 'llm', 'llama3.1'],
  );
  const fromEnv = loadModelCatalogue({
    ORACLE_MODELS: '[{"id":"builtin","provider":"builtin"},{"id":"m2","provider":"builtin"}]',
  });
  t.same(
    [fromEnv.defaultId, fromEnv.find('m2')?.info.isDefault],
    ['builtin', false],
    'an array: the first is the default',
  );
});

t.test('a bad catalogue stops the start with a message naming the problem', async (t) => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ ORACLE_MODELS: '{nope' }, /^ORACLE_MODELS is not JSON/],
    [{ ORACLE_MODELS: '[]' }, /must list at least one model/],
    [{ ORACLE_MODELS: '[{"id":"a","provider":"builtin","tier":"cheap"}]' }, /tier must be everyday, balanced or top/],
    [
      { ORACLE_MODELS: '[{"id":"a","provider":"builtin","pricing":{"inputPerMillion":-1,"outputPerMillion":0}}]' },
      /inputPerMillion must be 0 or more/,
    ],
    [{ ORACLE_MODELS: '[{"id":"a"}]' }, /model a runs on the LLM server, but LLM_BASE_URL is not set/],
    [
      { ORACLE_MODELS: '{"models":[{"id":"a","provider":"builtin"}],"default":"b"}' },
      /the default b is not one of the models/,
    ],
    [{ ORACLE_MODELS: '[{"id":"a","provider":"builtin"},{"id":"a","provider":"builtin"}]' }, /two models share an id/],
    [
      { ORACLE_MODELS_FILE: '/nonexistent/models.json' },
      /ORACLE_MODELS_FILE \/nonexistent\/models.json cannot be read/,
    ],
  ];
  for (const [config, message] of bad) t.throws(() => loadModelCatalogue(config), message, JSON.stringify(config));
});
