// The protocol gateway through HTTP, as a REST client uses it, against the embedded local query node
// (GATEWAY_GRPC_TARGET unset) and its sample data: every module, pagination like the chain's, errors,
// block height in and out, then reflection-loaded descriptors with a prefix, legacy routes and API keys.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { bundledSchema } from '../dist/src/gateway/descriptors.js';
import { openApiPath, parseTemplate } from '../dist/src/gateway/path-template.js';
import { sharedTestServer, startTestServer } from './helpers/server.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/gateway-local-node.json', import.meta.url), 'utf8'));
const ENTITY = 'did:ixo:entity:0f4e0bd5b3b74e1e8c4f2a8f1b6e9d21';
const USER_DID = 'did:x:zQ3shwFE2SnQXJ4tFo8W1H5aKXxhtWxL8zQ4ESrE2KUCZqWkz';
const MINTER = 'ixo1minter4v7b0n3m6k9j2h5g8f1d4s7a0p3o6i9u2';
const CARBON = 'ixo14hj2tavq8fpesdwxxcu44rty3hh90vhujrvcmstl4zr3txmfvw9sqvvvpc';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

async function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(base + path, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** The default configuration (bundled descriptors, no prefix, no keys): read-only, for both tests. */
const bundledServer = sharedTestServer(t);

t.test('embedded local query node, bundled descriptors', async (t) => {
  const server = await bundledServer();
  const call = (path: string, headers?: Record<string, string>) => get(server.url, path, headers);

  t.test('entity params: exact Cosmos REST JSON, block height header, JSON content type', async (t) => {
    const res = await call('/ixo/entity/params');
    t.equal(res.status, 200);
    t.equal(
      res.text,
      '{"params":{"nftContractAddress":"ixo1nftcontract0a9s8d7f6g5h4j3k2l1z0x9c8v7b6n5m4q3w2e1r0t9y8u7i",' +
        '"nftContractMinter":"ixo1xf2kqz0sn4r7u8d9q5v8m3ghj6wlak5e3ydp8r","createSequence":"4"}}',
    );
    t.equal(res.headers.get('x-cosmos-block-height'), '1250000');
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.equal(res.headers.get('access-control-allow-origin'), '*');
  });

  t.test('an entity by its did: id in the path, with its IID document', async (t) => {
    const res = await call(`/ixo/entity/${ENTITY}`);
    t.equal(res.status, 200);
    const { entity, iidDocument } = res.body;
    t.same(Object.keys(entity), [
      'id',
      'type',
      'start_date',
      'end_date',
      'status',
      'relayer_node',
      'credentials',
      'entity_verified',
      'metadata',
      'accounts',
    ]);
    t.equal(entity.id, ENTITY);
    t.equal(entity.start_date, '2024-01-01T00:00:00Z');
    t.equal(entity.end_date, '2026-12-31T23:59:59.500Z');
    t.equal(entity.metadata.created, '2024-01-01T08:30:00.123456Z');
    t.equal(entity.status, 1);
    t.equal(iidDocument.id, ENTITY);
    const [account, key] = iidDocument.verificationMethod;
    t.ok(
      'blockchainAccountID' in account && !('publicKeyMultibase' in account) && !('publicKeyHex' in account),
      'only the set oneof member',
    );
    t.equal(key.publicKeyMultibase, fixture.records.iidDocument[0].verificationMethod[1].publicKeyMultibase);
    t.same((await call(`/ixo/entity/${encodeURIComponent(ENTITY)}`)).body, res.body, 'an escaped id is the same id');
  });

  t.test('entity sub-resources and a missing entity', async (t) => {
    t.same((await call(`/ixo/entity/${ENTITY}/verified`)).body, { entity_verified: true });
    t.equal((await call(`/ixo/entity/${ENTITY}/metadata`)).body.entity.type, 'protocol/claim');
    t.equal((await call(`/ixo/entity/${ENTITY}/iiddocument`)).body.iidDocument.alsoKnownAs, 'impact-protocol');
    const missing = await call('/ixo/entity/did:ixo:entity:nope');
    t.equal(missing.status, 404);
    t.same(missing.body, { code: 5, message: 'entity did:ixo:entity:nope not found', details: [] });
  });

  t.test('entity list: chain pagination (default limit counts the total, key, offset, reverse)', async (t) => {
    const all = await call('/ixo/entity');
    t.equal(all.body.entities.length, 4);
    t.same(all.body.pagination, { next_key: null, total: '4' });
    const ids = all.body.entities.map((e: { id: string }) => e.id);
    t.same(ids, [...ids].sort(), 'in key order');

    const first = await call('/ixo/entity?pagination.limit=2');
    t.same(
      first.body.entities.map((e: { id: string }) => e.id),
      ids.slice(0, 2),
    );
    t.equal(first.body.pagination.total, '0', 'no total unless asked');
    t.equal(Buffer.from(first.body.pagination.next_key, 'base64').toString(), ids[2]);
    const second = await call(
      `/ixo/entity?pagination.limit=2&pagination.key=${encodeURIComponent(first.body.pagination.next_key)}`,
    );
    t.same(
      second.body.entities.map((e: { id: string }) => e.id),
      ids.slice(2),
    );
    t.same(second.body.pagination, { next_key: null, total: '0' });

    const offset = await call('/ixo/entity?pagination.offset=1&pagination.limit=2&pagination.count_total=true');
    t.same(
      offset.body.entities.map((e: { id: string }) => e.id),
      ids.slice(1, 3),
    );
    t.equal(offset.body.pagination.total, '4');
    const reverse = await call('/ixo/entity?pagination.reverse=true&pagination.limit=1&pagination.countTotal=1');
    t.same(
      reverse.body.entities.map((e: { id: string }) => e.id),
      [ids[3]],
    );
    t.equal(Buffer.from(reverse.body.pagination.next_key, 'base64').toString(), ids[2]);

    const both = await call(`/ixo/entity?pagination.offset=1&pagination.key=${first.body.pagination.next_key}`);
    t.equal(both.status, 400);
    t.same(both.body, { code: 3, message: 'invalid request, either offset or key is expected, got both', details: [] });
    const bad = await call('/ixo/entity?pagination.limit=ten');
    t.equal(bad.status, 400);
    t.equal(bad.body.code, 3);
    t.match(bad.body.message, /pagination\.limit/);
  });

  t.test('claims: params, collections, claims with evaluations, disputes, intents, members, deposits', async (t) => {
    t.same((await call('/ixo/claims/params')).body, {
      params: {
        collection_sequence: '3',
        ixo_account: 'ixo1kqmtxkggcqa9u34lnr6shy0euvclgatw4f9zz5',
        network_fee_percentage: '0.100000000000000000',
        node_fee_percentage: '0.050000000000000000',
        intent_sequence: '3',
      },
    });
    const { collection } = (await call('/ixo/claims/collection/1')).body;
    t.equal(collection.state, 'OPEN');
    t.equal(collection.quota, '1000');
    t.equal(collection.intents, 'ALLOW');
    t.equal(collection.payments.evaluation.timeout_ns, '1.500s');
    t.equal(collection.payments.approval.timeout_ns, '3600s');
    t.equal(collection.payments.rejection, null);
    t.same(collection.payments.approval.amount[0], { denom: 'uixo', amount: '250000' });
    t.equal((await call('/ixo/claims/collections')).body.collections.length, 2);

    const claims = (await call('/ixo/claims/claims')).body.claims;
    t.same(
      claims.map((c: any) => c.evaluation?.status ?? null),
      ['APPROVED', 'REJECTED', null, 'APPROVED'],
    );
    t.same(
      claims[3].evaluation_history.map((e: any) => e.status),
      ['FLAGGED'],
      'a flagged evaluation moved to the history',
    );
    t.same(collection.adjudicators, [
      { did: 'did:ixo:entity:2b7a9c41d0e64f3a9a51c2e7f8d30b64', reward_percentage: '20.000000000000000000' },
      { did: 'did:ixo:entity:0f4e0bd5b3b74e1e8c4f2a8f1b6e9d21', reward_percentage: '12.500000000000000000' },
    ]);
    t.equal(collection.min_deposit_period, '604800s');
    t.same(collection.payments.approval.cw20_payment, [
      { address: 'ixo1cw20contract8s7d6f5g4h3j2k1l0z9x8c7v6b5n4m3q2w1e0r9t8y7u6', amount: '2500' },
    ]);
    t.equal(collection.payments.approval.contract_1155_payment, null);
    const claim = (await call('/ixo/claims/claim/bafkreiclaim0003cccc')).body.claim;
    t.equal(claim.submission_date, '2024-05-01T08:00:00.000001Z');
    t.equal(claim.use_intent, true);
    t.same(claim.cw20_payment, [
      { address: 'ixo1cw20contract8s7d6f5g4h3j2k1l0z9x8c7v6b5n4m3q2w1e0r9t8y7u6', amount: '18446744073709551615' },
    ]);
    t.same(claim.cw1155_intent_payment[0].tokens, [{ token_id: '0f1e2d3c4b5a69788796a5b4c3d2e1f0', amount: '2' }]);
    t.same(claim.payments_status, {
      submission: 'AUTHORIZED',
      evaluation: 'NO_PAYMENT',
      approval: 'NO_PAYMENT',
      rejection: 'NO_PAYMENT',
    });

    t.equal(
      (await call('/ixo/claims/dispute/bafybeidisputeproof0001')).body.dispute.target_role,
      'DISPUTE_TARGET_ROLE_EVALUATOR',
    );
    t.equal((await call('/ixo/claims/disputes')).body.disputes.length, 2);
    const bySubject = await call('/ixo/claims/dispute-by-subject/bafkreiclaim0002bbbb/DISPUTE_TARGET_ROLE_SUBMITTER');
    t.equal(bySubject.body.dispute.data.proof, 'bafybeidisputeproof0002');
    t.equal(bySubject.body.dispute.status, 'DISPUTE_STATUS_DISMISSED');
    t.equal(bySubject.body.dispute.submitted_at, '2024-04-08T14:00:00.500Z');
    t.same(bySubject.body.dispute.resolution.winner_amount, [{ denom: 'uixo', amount: '40000' }]);
    t.equal(bySubject.body.dispute.resolution.resolved_at, '2024-04-20T16:00:00Z');
    t.same(
      (await call('/ixo/claims/dispute-by-subject/bafkreiclaim0002bbbb/1')).body,
      bySubject.body,
      'an enum path value by number',
    );
    t.equal((await call('/ixo/claims/dispute-by-subject/bafkreiclaim0002bbbb/SOMEONE')).status, 400);
    t.equal((await call('/ixo/claims/disputes-for-subject/bafkreiclaim0002bbbb')).body.disputes.length, 2);

    const intent = fixture.records.intent[1];
    t.equal(
      (await call(`/ixo/claims/intent/${intent.agent_address}/${intent.collection_id}/${intent.id}`)).body.intent
        .status,
      'ACTIVE',
    );
    const intents = (await call('/ixo/claims/intents')).body.intents;
    t.same(
      intents.map((i: any) => [i.id, i.claim_id, i.status]),
      [
        ['1', 'bafkreiclaim0003cccc', 'FULFILLED'],
        ['2', '', 'ACTIVE'],
      ],
    );
    const member = fixture.records.member[0];
    t.equal(
      (await call(`/ixo/claims/collection/1/member/${member.member_address}`)).body.member_budget.period,
      '2592000s',
    );
    t.equal((await call('/ixo/claims/collection/1/members')).body.member_budgets.length, 1);
    t.same((await call('/ixo/claims/collection/2/members')).body, {
      member_budgets: [],
      pagination: { next_key: null, total: '0' },
    });
    const deposit = fixture.records.deposit[0];
    t.same((await call(`/ixo/claims/collection/1/deposit/${deposit.agent_address}`)).body.balance.amount, [
      { denom: 'uixo', amount: '500000' },
    ]);
    const deposits = (await call('/ixo/claims/collection/1/deposits')).body.balances;
    // Keyed by collection then agent address: ixo1agent2... sorts before ixo1agent7...
    t.same(
      deposits.map((d: any) => [d.agent_address.slice(0, 10), d.withdrawable_at]),
      [
        ['ixo1agent2', null],
        ['ixo1agent7', '2024-07-01T00:00:00Z'],
      ],
    );
  });

  t.test('token: params, metadata, list per minter (pagination first), one token', async (t) => {
    t.equal((await call('/ixo/token/params')).text, '{"params":{"ixo1155_contract_code":"25"}}');
    const list = await call(`/ixo/token/minter/${MINTER}`);
    t.same(Object.keys(list.body), ['pagination', 'tokenDocs']);
    t.same(list.body.tokenDocs.map((token: any) => token.name).sort(), ['CARBON', 'SUPAMOTO']);
    const doc = (await call(`/ixo/token/minter/${MINTER}/${CARBON}`)).body.tokenDoc;
    t.equal(doc.supply, '25340');
    t.equal(doc.retired[0].amount, '120');
    t.same(doc.transferred, [
      {
        id: '0f1e2d3c4b5a69788796a5b4c3d2e1f0',
        reason: 'sold to offsetter',
        jurisdiction: 'MW',
        amount: '40',
        owner: 'ixo1agent2b4d6f8h0j2l4n6p8r0t2v4x6z8b0d2f4h6',
        authorization_id: 'auth-7',
      },
    ]);
    const metadata = (await call('/ixo/token/metadata/0f1e2d3c4b5a69788796a5b4c3d2e1f0')).body;
    t.equal(metadata.properties.linkedResources[0].uri, 'ipfs://bafkreicarbonvc');
    t.equal((await call('/ixo/token/metadata/unknown')).status, 404);
  });

  t.test('bonds: list, details, params, one bond, batches, prices and reserves', async (t) => {
    const BOND = 'did:ixo:entity:7a1c3e5f9b2d4f6a8c0e2b4d6f8a0c2e';
    const ALPHA = 'did:ixo:entity:3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e';
    const POOL = 'did:ixo:entity:5d2b4f6a8c0e1a3c5e7f9b1d3f5a7c9e';
    t.same((await call('/ixo/bonds/bonds')).body, { bonds: [ALPHA, POOL, BOND] });
    t.same((await call('/ixo/bonds/params')).body, { params: { reserved_bond_tokens: ['uixo', 'stake'] } });
    const { bond } = (await call(`/ixo/bonds/${BOND}`)).body;
    t.equal(bond.tx_fee_percentage, '0.500000000000000000');
    t.same(bond.function_parameters[0], { param: 'm', value: '12.000000000000000000' });
    t.same(bond.current_supply, { denom: 'xusd', amount: '2500' });
    t.equal(bond.batch_blocks, '1');
    const detailed = (await call('/ixo/bonds/bonds_detailed')).body.bonds_detailed;
    t.same(detailed[2], {
      bond_did: BOND,
      spot_price: [{ denom: 'uixo', amount: '75000100.000000000000000000' }],
      supply: { denom: 'xusd', amount: '2500' },
      reserve: [{ denom: 'uixo', amount: '62500250000' }],
    });
    t.equal((await call(`/ixo/bonds/${ALPHA}/batch`)).body.batch.next_public_alpha, '0.500000000000000000');
    t.same((await call(`/ixo/bonds/${BOND}/last_batch`)).body.last_batch.buys, []);
    t.equal((await call(`/ixo/bonds/${ALPHA}/last_batch`)).status, 404);
    t.same((await call(`/ixo/bonds/${BOND}/current_reserve`)).body, {
      current_reserve: [{ denom: 'uixo', amount: '62500250000' }],
    });
    t.equal((await call('/ixo/bonds/did:ixo:entity:unknown/buy_price/10')).status, 404);
    t.equal((await call('/ixo/bonds/did:ixo:entity:unknown')).status, 404);
  });

  t.test(
    'modules without sample data answer like a node with empty state: empty lists, default params, 404 for a record',
    async (t) => {
      t.same((await call('/ixo/epochs/v1beta1/epochs')).body, { epochs: [] });
      t.same((await call('/ixo/mint/v1beta1/epoch_provisions')).body, { epoch_provisions: '0.000000000000000000' });
      const params = (await call('/ixo/mint/v1beta1/params')).body.params;
      t.same(params.distribution_proportions, {
        staking: '0.000000000000000000',
        impact_rewards: '0.000000000000000000',
        community_pool: '0.000000000000000000',
      });
      t.same((await call('/ixo/names/v1beta1/namespaces')).body, { namespaces: [], pagination: null });
      t.equal((await call('/ixo/names/v1beta1/resolve/ixo/alice')).status, 404);
      t.same((await call('/ixo/liquidstake/v1beta1/module_params')).body, {
        module_params: { min_liquid_stake_amount: '0', module_paused: false },
      });
      t.same((await call('/ixo/smartaccount/authenticators/ixo1someone')).body, { account_authenticators: [] });
      t.equal((await call('/ixo/smartaccount/authenticator/ixo1someone/1')).status, 404);
      t.same((await call('/cosmos/staking/v1beta1/validators')).body, { validators: [], pagination: null });
      t.equal((await call('/cosmos/tx/v1beta1/txs/ABCDEF')).status, 404);
      t.same((await call('/cosmos/base/tendermint/v1beta1/syncing')).body, { syncing: false });
    },
  );

  t.test(
    'bank: balances by address (paged by denom), one denom, supply summed over the accounts, params',
    async (t) => {
      const AGENT = 'ixo1agent2b4d6f8h0j2l4n6p8r0t2v4x6z8b0d2f4h6';
      const all = (await call(`/cosmos/bank/v1beta1/balances/${AGENT}`)).body;
      t.same(
        all.balances.map((c: any) => c.denom),
        ['ibc/6BBE9BD4246F8E04948D5A4EEE7164B2630263B9EBB5E7DC5F0A46C62A2FF97B', 'uixo', 'xusd'],
      );
      t.same(all.pagination, { next_key: null, total: '3' });
      const first = (await call(`/cosmos/bank/v1beta1/balances/${AGENT}?pagination.limit=1`)).body;
      t.same(first.balances, [
        { denom: 'ibc/6BBE9BD4246F8E04948D5A4EEE7164B2630263B9EBB5E7DC5F0A46C62A2FF97B', amount: '2500000' },
      ]);
      const next = (
        await call(
          `/cosmos/bank/v1beta1/balances/${AGENT}?pagination.limit=1&pagination.key=${encodeURIComponent(first.pagination.next_key)}`,
        )
      ).body;
      t.same(next.balances, [{ denom: 'uixo', amount: '1250000000' }]);
      t.same((await call(`/cosmos/bank/v1beta1/balances/${AGENT}/by_denom?denom=xusd`)).body, {
        balance: { denom: 'xusd', amount: '10' },
      });
      t.same((await call('/cosmos/bank/v1beta1/balances/ixo1nobody/by_denom?denom=uixo')).body, {
        balance: { denom: 'uixo', amount: '0' },
      });
      t.same((await call('/cosmos/bank/v1beta1/balances/ixo1nobody')).body, {
        balances: [],
        pagination: { next_key: null, total: '0' },
      });
      t.equal((await call(`/cosmos/bank/v1beta1/balances/${AGENT}/by_denom`)).status, 400);
      t.same((await call('/cosmos/bank/v1beta1/supply/by_denom?denom=uixo')).body, {
        amount: { denom: 'uixo', amount: '123456789012345678902582567890' },
      });
      t.equal((await call('/cosmos/bank/v1beta1/supply')).body.supply.length, 3);
      t.same((await call('/cosmos/bank/v1beta1/params')).body, {
        params: { send_enabled: [], default_send_enabled: true },
      });
      t.same(
        (await call('/cosmos/bank/v1beta1/denoms_metadata')).body,
        { metadatas: [], pagination: null },
        'the list, not the one-denom route',
      );
    },
  );

  t.test('iid: documents list and one document', async (t) => {
    const list = (await call('/ixo/did/dids')).body;
    t.equal(list.iidDocuments.length, 6);
    t.equal(list.pagination.total, '6');
    const doc = (await call(`/ixo/did/dids/${USER_DID}`)).body.iidDocument;
    t.equal(doc.verificationMethod[0].publicKeyBase58, 'tJxyxpAFw7RRudSxrbkmNXJZoQyQQe3SWhDQZbQWK7ew');
    t.equal(doc.metadata, null);
  });

  t.test('x-cosmos-block-height goes to the node and comes back', async (t) => {
    const past = await call('/ixo/token/params', { 'x-cosmos-block-height': '1000' });
    t.equal(past.status, 200);
    t.equal(past.headers.get('x-cosmos-block-height'), '1000');
    t.equal(past.headers.get('grpc-metadata-x-cosmos-block-height'), '1000', 'also as a v0.50 node REST names it');
    const gatewayStyle = await call('/ixo/token/params', { 'grpc-metadata-x-cosmos-block-height': '1200' });
    t.equal(
      gatewayStyle.headers.get('x-cosmos-block-height'),
      '1200',
      'the grpc-gateway spelling is accepted on the way in',
    );
    const future = await call('/ixo/token/params', { 'x-cosmos-block-height': '99999999' });
    t.equal(future.status, 400);
    t.same(future.body, {
      code: 3,
      message: 'cannot query with height in the future; please provide a valid height',
      details: [],
    });
    const bad = await call('/ixo/token/params', { 'x-cosmos-block-height': 'latest' });
    t.equal(bad.status, 400);
    t.equal(bad.body.code, 3);
  });

  t.test('a path that matches no route: 404 in the Cosmos error shape', async (t) => {
    for (const path of ['/ixo/nope', '/ixo/entity/a/b/c', '/ixo/token/ixo1a']) {
      const res = await call(path);
      t.equal(res.status, 404, path);
      t.same(res.body, { code: 5, message: 'Not Found', details: [] }, path);
    }
  });

  t.test('the OpenAPI document lists the gateway operations from the descriptors', async (t) => {
    const doc = (await call('/docs-json')).body;
    const operation = doc.paths['/ixo/entity/{id}']?.get;
    t.equal(operation?.operationId, 'ixo_entity_v1beta1_Query_Entity');
    t.same(operation.parameters[0], { name: 'id', in: 'path', required: true, schema: { type: 'string' } });
    t.ok(doc.paths['/ixo/claims/dispute-by-subject/{subjectId}/{targetRole}']);
    t.ok(
      doc.paths['/ixo/entity'].get.parameters.some((p: any) => p.name === 'pagination.count_total' && p.in === 'query'),
    );
    t.same(doc.components.schemas['ixo.entity.v1beta1.Entity'].properties.start_date, {
      anyOf: [{ type: 'string', format: 'date-time', examples: ['2024-01-31T12:00:00Z'] }, { type: 'null' }],
    });
    t.same(doc.components.schemas['ixo.entity.v1beta1.Params'].properties.createSequence, {
      type: 'string',
      format: 'uint64',
      pattern: '^\\d+$',
    });
    t.notOk(doc.paths['/ixo/*'], 'the wildcard mounts are not documented');
    // Every route of the bundled schema, with a required path parameter per template variable.
    const routes = bundledSchema().methods.flatMap((method) => method.patterns);
    t.ok(routes.length > 100);
    const missing = routes.filter((template) => {
      const path = openApiPath(parseTemplate(template));
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const parameters = doc.paths[path]?.get?.parameters ?? [];
      return !names.every((name) => parameters.some((p: any) => p.name === name && p.in === 'path' && p.required));
    });
    t.same(missing, [], 'every gateway route is documented with its path parameters');
  });
});

t.test('reflection descriptors, prefix, legacy routes and API keys', async (t) => {
  const bundled = await bundledServer();
  const server = await startTestServer(t, {
    env: {
      GATEWAY_DESCRIPTORS: 'reflection',
      GATEWAY_PREFIX: '/api/protocol/',
      GATEWAY_LEGACY_ROUTES: 'true',
      GATEWAY_API_KEYS: 'alpha-key, beta-key',
    },
  });
  const key = { 'x-api-key': 'beta-key' };

  t.test('gating: no key 401, unknown key 403, known key 200', async (t) => {
    const none = await get(server.url, '/api/protocol/ixo/token/params');
    t.equal(none.status, 401);
    t.same(none.body, { code: 16, message: 'missing API key: send it in the x-api-key header', details: [] });
    const unknown = await get(server.url, '/api/protocol/ixo/token/params', { 'x-api-key': 'gamma-key' });
    t.equal(unknown.status, 403);
    t.same(unknown.body, { code: 7, message: 'unknown API key', details: [] });
    t.equal((await get(server.url, '/api/protocol/ixo/token/params', key)).status, 200);
    t.equal((await get(bundled.url, '/ixo/token/params')).status, 200, 'no keys configured: open');
  });

  t.test("routes built from the node's FileDescriptors answer as the bundled ones", async (t) => {
    for (const path of [
      '/ixo/entity/params',
      `/ixo/entity/${ENTITY}`,
      '/ixo/claims/claims',
      '/ixo/claims/collection/1',
      `/ixo/token/minter/${MINTER}`,
      '/ixo/did/dids',
    ]) {
      const reflected = await get(server.url, `/api/protocol${path}`, key);
      t.equal(reflected.status, 200, path);
      t.equal(reflected.text, (await get(bundled.url, path)).text, path);
    }
  });

  t.test('the prefix is required; under it, unmatched paths get the Cosmos 404', async (t) => {
    t.equal((await get(server.url, '/ixo/token/params', key)).status, 404);
    const other = await get(server.url, '/api/protocol/cosmos/nope/v1beta1/params', key);
    t.equal(other.status, 404);
    t.same(other.body, { code: 5, message: 'Not Found', details: [] });
  });

  t.test('legacy paths of older builds', async (t) => {
    t.equal(
      (await get(server.url, '/api/protocol/ixo/collection/1', key)).text,
      (await get(bundled.url, '/ixo/claims/collection/1')).text,
    );
    t.equal((await get(server.url, '/api/protocol/ixo/claim', key)).body.claims.length, 4);
    t.equal((await get(server.url, `/api/protocol/ixo/token/${MINTER}`, key)).body.tokenDocs.length, 2);
    t.equal((await get(server.url, `/api/protocol/ixo/token/${MINTER}/${CARBON}`, key)).body.tokenDoc.name, 'CARBON');
    t.equal(
      (await get(server.url, '/api/protocol/ixo/token/params', key)).body.params.ixo1155_contract_code,
      '25',
      'current routes win',
    );
    const doc = (await get(server.url, '/docs-json')).body;
    t.equal(doc.paths['/api/protocol/ixo/collection/{id}'].get.deprecated, true);
    t.ok(doc.paths['/api/protocol/ixo/claims/collection/{id}'].get);
  });
});
