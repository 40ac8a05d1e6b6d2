// The credits plugin: a per-user balance in LMDB; when it runs out the turn is refused with 402 carrying
// claims / outstandingClaims, before the agent is built.
import t from 'tap';
import { openLmdbOracleRepositories } from '../dist/src/oracle/repositories.js';
import { openLmdbCredits } from '../dist/src/oracle/plugins/credits/lmdb-repository.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../dist/src/store/env.js';
import * as v from 'valibot';
import { oracleEnv } from '../dist/src/oracle/config.js';
import { createPlugins } from '../dist/src/oracle/plugins/index.js';
import { creditLedger, PaymentRequiredError, MAX_OUTSTANDING } from '../dist/src/oracle/plugins/credits/ledger.js';
import { chatFailure } from '../dist/src/oracle/errors.js';
import { HttpError } from '../dist/src/http/errors.js';
import { prepareTurn } from '../dist/src/oracle/actor/agent/turn.js';
import type { TurnContext } from '../dist/src/oracle/chat/agent-types.js';

// mkdtemp, not t.testdir(): lmdb treats a path whose last segment has a dot (".test.ts-...") as a file.
function tempStore(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'oracle-credits-'));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

const turn = (userDid: string): TurnContext => ({
  userDid,
  oracleDid: 'did:key:zOracle',
  sessionId: 's',
  requestId: 'r',
  signal: new AbortController().signal,
});

async function refusal(promise: Promise<unknown>): Promise<PaymentRequiredError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof PaymentRequiredError)) throw new Error(`expected credits_exhausted, got ${String(error)}`);
  return error;
}

t.test('the CREDITS_* and LLM_* variables are part of the oracle configuration', async (t) => {
  const schema = v.object(oracleEnv);
  const load = (env: Record<string, string>) => v.parse(schema, env);
  const defaults = load({});
  t.same([defaults.CREDITS_ENABLED, defaults.CREDITS_INITIAL, defaults.CREDITS_PER_MESSAGE], [false, 10, 1]);
  t.same([defaults.LLM_BASE_URL, defaults.LLM_MODEL, defaults.AGENT_MAX_STEPS], [undefined, 'gpt-4o-mini', 8]);
  const on = load({
    CREDITS_ENABLED: 'true',
    CREDITS_INITIAL: '3',
    CREDITS_PER_MESSAGE: '2',
    LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
  });
  t.same(
    [on.CREDITS_ENABLED, on.CREDITS_INITIAL, on.CREDITS_PER_MESSAGE, on.LLM_BASE_URL],
    [true, 3, 2, 'http://127.0.0.1:11434/v1'],
  );
  t.throws(() => load({ CREDITS_INITIAL: '-1' }), /must be at least 0/);
  t.throws(() => load({ CREDITS_ENABLED: 'maybe' }), /must be true or false/);
  t.throws(() => load({ LLM_BASE_URL: 'not a url' }), /must be a URL/);
});

t.test('charges until the balance runs out, then 402 with the refused claim and the outstanding ones', async (t) => {
  const ledger = creditLedger(openLmdbCredits(tempStore(t)), { initial: 3, perMessage: 1 });
  const fresh = await ledger.account('did:key:zA');
  t.same(fresh, { balance: 3, outstandingClaims: [], updatedAt: fresh.updatedAt });
  for (const left of [2, 1, 0]) t.equal((await ledger.charge('did:key:zA')).balance, left);

  const first = await refusal(ledger.charge('did:key:zA'));
  t.equal(first.code, 'credits_exhausted');
  t.match(first.claims, [/^claim-[0-9a-f-]{36}$/]);
  t.same(first.outstandingClaims, first.claims);
  const answer = chatFailure(first);
  if (!(answer instanceof HttpError)) throw new Error('credits_exhausted maps to an HttpError');
  const reply = answer.toReply();
  t.equal(reply.status, 402);
  t.same(JSON.parse(String(reply.body)), {
    statusCode: 402,
    message:
      'Insufficient credits: a message costs 1 and your balance is 0. Settle the outstanding claims to continue.',
    error: 'Payment Required',
    claims: first.claims,
    outstandingClaims: first.claims,
  });

  const second = await refusal(ledger.charge('did:key:zA'));
  t.notSame(second.claims, first.claims, 'each refused charge is its own claim');
  t.same(second.outstandingClaims, [...first.claims, ...second.claims], 'oldest first');
  t.equal((await ledger.account('did:key:zA')).balance, 0, 'a refused charge takes nothing');
  t.equal((await ledger.charge('did:key:zB')).balance, 2, 'balances are per user');

  const topped = await ledger.topUp('did:key:zA', 5);
  t.same([topped.balance, topped.outstandingClaims], [5, []], 'a top-up settles the outstanding claims');
  t.equal((await ledger.charge('did:key:zA')).balance, 4);
});

t.test('the outstanding list is bounded', async (t) => {
  const ledger = creditLedger(openLmdbCredits(tempStore(t)), { initial: 0, perMessage: 1 });
  let last!: PaymentRequiredError;
  for (let i = 0; i < MAX_OUTSTANDING + 5; i++) last = await refusal(ledger.charge('did:key:zA'));
  t.equal(last.outstandingClaims.length, MAX_OUTSTANDING);
  t.equal(last.outstandingClaims.at(-1), last.claims[0]);
});

t.test('concurrent charges never spend more than the balance', async (t) => {
  const ledger = creditLedger(openLmdbCredits(tempStore(t)), { initial: 10, perMessage: 1 });
  const outcomes = await Promise.allSettled(Array.from({ length: 15 }, () => ledger.charge('did:key:zA')));
  t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 10);
  t.equal(outcomes.filter((o) => o.status === 'rejected').length, 5);
  t.same((await ledger.account('did:key:zA')).balance, 0);
  t.equal((await ledger.account('did:key:zA')).outstandingClaims.length, 5);
});

t.test('with CREDITS_ENABLED the turn is refused before the agent is built', async (t) => {
  const store = tempStore(t);
  const plugins = createPlugins({
    config: { CREDITS_ENABLED: true, CREDITS_INITIAL: 1, CREDITS_PER_MESSAGE: 1 },
    repositories: openLmdbOracleRepositories(store),
  });
  t.same(
    plugins.map((p) => p.name),
    ['credits', 'user-preferences'],
  );
  const input = { plugins, oracleName: 'O', history: [], userMessage: 'hi' };
  const ok = await prepareTurn({ ...input, context: turn('did:key:zA') });
  t.equal(ok.messages.at(-1)?.content, 'hi');
  const refused = await refusal(prepareTurn({ ...input, context: turn('did:key:zA') }));
  t.equal(refused.code, 'credits_exhausted');
  t.equal(store.db<{ balance: number }>('oracle-credits').get('did:key:zA')?.balance, 0, 'stored in oracle-credits');

  const free = createPlugins({
    config: { CREDITS_ENABLED: false, CREDITS_INITIAL: 0, CREDITS_PER_MESSAGE: 1 },
    repositories: openLmdbOracleRepositories(store),
  });
  await prepareTurn({ ...input, plugins: free, context: turn('did:key:zPoor') });
  t.equal(store.db('oracle-credits').get('did:key:zPoor'), undefined, 'credits off: nothing charged');
});
