// The dense parts of the MCP path on their own: MCP_SERVERS validation (JSON or file, clear start-up
// errors), offered tool names, tool results as text, and the minting service (what it signs, when it
// refuses and asks for re-authorisation).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openLmdbOracleRepositories } from '../dist/src/oracle/repositories.js';
import { Delegation } from '@ucanto/core';
import { ConfigError, loadConfig } from '../dist/src/app/config.js';
import { openLmdbDelegations } from '../dist/src/oracle/lmdb-delegations.js';
import { mcpResource, offeredName, resultText } from '../dist/src/oracle/actor/mcp/toolbox.js';
import { createUcanMinter, ReauthorisationRequired, ucanMinterFor } from '../dist/src/oracle/actor/ucan-minting.js';
import { openStore } from '../dist/src/store/env.js';
import { formatKey, generateKey, mintDelegation } from '../dist/src/tools/mint-ucan.js';
import { repeatedLinkDelegation } from './helpers/ucan-mutations.js';

function configProblems(value: string): string[] {
  try {
    loadConfig({ MCP_SERVERS: value });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

t.test('MCP_SERVERS: JSON or a JSON file; every problem named at start-up', async (t) => {
  t.same(loadConfig({}).MCP_SERVERS, [], 'unset: no servers');
  t.same(
    loadConfig({
      MCP_SERVERS:
        '[{"name":"ixo_docs","url":"http://127.0.0.1:4000/mcp"},{"name":"ledger","url":"https://mcp.example.org/mcp","did":"did:ixo:entity:abc","protected":true}]',
    }).MCP_SERVERS,
    [
      { name: 'ixo_docs', url: 'http://127.0.0.1:4000/mcp', protected: false },
      { name: 'ledger', url: 'https://mcp.example.org/mcp', did: 'did:ixo:entity:abc', protected: true },
    ],
  );
  const dir = t.testdir();
  const file = join(dir, 'mcp.json');
  writeFileSync(file, JSON.stringify([{ name: 'files', url: 'http://127.0.0.1:9/mcp', protected: false }]));
  t.same(
    loadConfig({ MCP_SERVERS: file }).MCP_SERVERS,
    [{ name: 'files', url: 'http://127.0.0.1:9/mcp', protected: false }],
    'read from the file',
  );
  t.equal(loadConfig({ MCP_TIMEOUT_MS: '2500' }).MCP_TIMEOUT_MS, 2500);

  const cases: [string, RegExp][] = [
    ['[oops', /^MCP_SERVERS="\[oops": MCP server list: not valid JSON \(/],
    [join(dir, 'missing.json'), /MCP server list: neither JSON nor a readable file \(ENOENT/],
    ['{"name":"a"}', /MCP server list: must be a JSON array of servers$/],
    ['[1]', /MCP server list: server 0: must be an object with name, url, did\? and protected$/],
    ['[{"url":"http://x"}]', /server 0: name is required$/],
    ['[{"name":"a__b","url":"http://x"}]', /server 0: name must be letters, digits, dashes and single underscores/],
    ['[{"name":"a","url":"ftp://x"}]', /server 0: url must be an http\(s\) URL/],
    ['[{"name":"a","url":"not a url"}]', /server 0: url must be a URL/],
    ['[{"name":"a","url":"http://x","protected":"yes"}]', /server 0: protected must be true or false/],
    [
      '[{"name":"a","url":"http://x","protected":true}]',
      /server 0: a protected server needs its did \(the audience of the invocations\)$/,
    ],
    ['[{"name":"a","url":"http://x","did":"ixo:abc"}]', /server 0: did must be a DID/],
    ['[{"name":"a","url":"http://x"},{"name":"a","url":"http://y"}]', /MCP server list: server names must be unique$/],
  ];
  for (const [value, problem] of cases) {
    const problems = configProblems(value);
    t.equal(problems.length, 1, value);
    t.match(problems[0], problem, value);
  }
  const several = configProblems('[{"name":"a","url":"http://x","protected":7},{"name":"b"}]');
  t.equal(several.length, 1, 'all problems of the list in one line');
  t.match(several[0], /server 0: protected must be true or false; server 1: url is required/);
  t.same(configProblems('[]'), [], 'an empty list is fine');
  t.throws(() => loadConfig({ MCP_TIMEOUT_MS: '50' }), ConfigError, 'a timeout below 100 ms is refused');
});

t.test('offered names: <server>__<tool>, MCP-only characters replaced, too long left out', async (t) => {
  t.equal(offeredName('weather', 'forecast'), 'weather__forecast');
  t.equal(offeredName('ixo_docs', 'search.v2/query'), 'ixo_docs__search_v2_query');
  t.equal(offeredName('s', 'x'.repeat(61)), `s__${'x'.repeat(61)}`);
  t.equal(offeredName('s', 'x'.repeat(62)), undefined);
  t.equal(mcpResource('did:key:z6Mk1', 'ledger', 'balance'), 'ixo:oracle:did:key:z6Mk1:mcp/ledger/balance');
});

t.test('results as text: text parts joined, other parts named, structured content when there is no text', async (t) => {
  t.equal(
    resultText({
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    }),
    'a\nb',
  );
  t.equal(
    resultText({
      content: [
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inside' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
      ],
    }),
    '[image image/png]\ninside\n[resource file:///b.bin]\n[resource file:///c]',
  );
  t.equal(resultText({ content: [], structuredContent: { balance: 12 } }), '{"balance":12}');
  t.equal(resultText({ content: [] }), '');
});

t.test('mintForUser: an invocation signed by the oracle, the stored delegation as proof, bounded by it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sar-mint-'));
  const store = openStore(dir);
  t.teardown(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const oracle = await generateKey();
  const user = await generateKey();
  const service = await generateKey();
  const delegations = openLmdbDelegations(store, oracle.did());
  let now = Math.floor(Date.now() / 1000);
  const minter = createUcanMinter({
    identity: async () => ({ did: oracle.did(), signer: oracle }),
    delegations: () => delegations,
    now: () => now,
  });
  const request = {
    userDid: user.did(),
    audience: service.did(),
    capability: { can: 'ledger/read', with: 'ixo:oracle:test:ledger' } as const,
  };

  await t.rejects(
    minter.mintForUser(request),
    new ReauthorisationRequired(user.did(), 'none', oracle.did()),
    'nothing stored',
  );
  await t.rejects(minter.mintForUser(request), {
    reason: 'none',
    message: /^Re-authorisation needed: no delegation from you is stored/,
  });

  const raw = await mintDelegation({ issuer: user, audience: oracle.did(), ttlSeconds: 120 });
  const expiration = now + 120;
  await delegations.put({
    raw,
    issuer: user.did(),
    audience: oracle.did(),
    expiration,
    storedAt: new Date().toISOString(),
  });
  const decode = async (text: string) => {
    const extracted = await Delegation.extract(Buffer.from(text, 'base64'));
    if (extracted.error) throw extracted.error;
    return extracted.ok;
  };
  const invocation = await decode(await minter.mintForUser(request));
  t.equal(invocation.issuer.did(), oracle.did());
  t.equal(invocation.audience.did(), service.did());
  t.same(invocation.capabilities, [{ can: 'ledger/read', with: 'ixo:oracle:test:ledger' }]);
  t.equal(invocation.expiration, expiration, 'cut to the delegation (120 s < the 300 s default)');
  t.equal(
    String((invocation.proofs[0] as { cid?: unknown }).cid),
    String((await decode(raw)).cid),
    'the stored delegation is the proof',
  );
  t.equal(
    (await decode(await minter.mintForUser({ ...request, ttlSeconds: 30 }))).expiration,
    now + 30,
    'a shorter lifetime is kept',
  );

  now = expiration;
  await t.rejects(minter.mintForUser(request), {
    reason: 'expired',
    message: /your delegation to this oracle has expired/,
  });

  await delegations.put({
    raw: 'QUJD',
    issuer: user.did(),
    audience: oracle.did(),
    storedAt: new Date().toISOString(),
  });
  await t.rejects(minter.mintForUser(request), { name: 'ReauthorisationRequired', reason: 'unreadable' });
  // Stored before POST /delegation refused it: proofs linking one proof 60 times a level, 15 levels, which
  // archive() would walk 60^15 times. Refused as unreadable at once, never archived.
  await delegations.put({
    raw: await repeatedLinkDelegation(user, oracle.did(), 60, 15),
    issuer: user.did(),
    audience: oracle.did(),
    storedAt: new Date().toISOString(),
  });
  await t.rejects(
    minter.mintForUser(request),
    { name: 'ReauthorisationRequired', reason: 'unreadable' },
    'a repeated-link delegation is unreadable',
  );

  // The per-thread minter reads the identity from the configuration (what plugins use).
  const fromConfig = ucanMinterFor({
    config: { ORACLE_PRIVATE_KEY: formatKey(oracle), DATA_DIR: dir },
    delegations: openLmdbOracleRepositories(store).delegations,
  });
  await delegations.put({ raw, issuer: user.did(), audience: oracle.did(), storedAt: new Date().toISOString() });
  const again = await decode(await fromConfig.mintForUser(request));
  t.equal(again.issuer.did(), oracle.did());
  t.ok(again.expiration <= Math.floor(Date.now() / 1000) + 300);
});
