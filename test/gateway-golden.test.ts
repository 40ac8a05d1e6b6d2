// Golden answers of the ixo v8 schemas: a @grpc/grpc-js node answers with bytes built by hand
// (fixtures/gateway/wire.ts, field numbers as on the chain, no protobufjs), and the gateway's JSON is
// compared with text written by hand from the gogoproto jsonpb rules a v0.50 node's REST follows
// (OrigName, EmitDefaults, 64-bit integers as strings, enums by name, RFC 3339 / "1.500s", LegacyDec
// with 18 decimals, Int "0" when empty, null for nil messages, never null for nullable=false ones).
// The same answers go through bundled descriptors, the node's reflection descriptors, and `auto` with a
// node that describes only the claims module (token routes then come from the bundled files).
import t from 'tap';
import type { Test } from 'tap';
import * as grpc from '@grpc/grpc-js';
import { fileDescriptorsOf } from '../dist/src/gateway/descriptors.js';
import { fileURLToPath } from 'node:url';
import { BUNDLED_FILES, loadProtoFiles, PROTO_DIR, protobuf } from '../dist/src/gateway/proto-root.js';
import { bytes, coin, message, msg, num, time } from './fixtures/gateway/wire.js';
import { startTestServer } from './helpers/server.js';

const CLAIMS = '/ixo.claims.v1beta1.Query/';
const BANK = '/cosmos.bank.v1beta1.Query/';
const TOKEN = '/ixo.token.v1beta1.Query/';

interface Golden {
  path: string;
  method: string;
  answer: Buffer;
  json: string;
  /** The request the gateway must send, by hand. */
  request?: Buffer;
}

const GOLDEN: Golden[] = [
  {
    path: '/ixo/claims/params',
    method: `${CLAIMS}Params`,
    answer: message(msg(1, num(1, 3), bytes(2, 'ixo1fee'), bytes(3, '100000000000000000'), bytes(4, '0'), num(5, 7))),
    json:
      '{"params":{"collection_sequence":"3","ixo_account":"ixo1fee","network_fee_percentage":"0.100000000000000000",' +
      '"node_fee_percentage":"0.000000000000000000","intent_sequence":"7"}}',
    request: message(),
  },
  {
    path: '/ixo/claims/intent/ixo1agent/5/9',
    method: `${CLAIMS}Intent`,
    request: message(bytes(1, '9'), bytes(2, 'ixo1agent'), bytes(3, '5')),
    answer: message(
      msg(
        1,
        bytes(1, '9'),
        bytes(2, 'did:x:a'),
        bytes(3, 'ixo1agent'),
        bytes(4, '5'),
        time(6, 1717171717, 120_000_000),
        num(8, 1),
        coin(9, 'uixo', '1000'),
        msg(10, bytes(1, 'ixo1cw20'), num(3, 18446744073709551615n)),
        bytes(12, 'ixo1escrow'),
        msg(14, bytes(1, 'ixo1c1155'), msg(2, bytes(1, 'tok'), num(2, 2))),
        bytes(15, 'ixo1member'),
      ),
    ),
    json:
      '{"intent":{"id":"9","agent_did":"did:x:a","agent_address":"ixo1agent","collection_id":"5","claim_id":"",' +
      '"created_at":"2024-05-31T16:08:37.120Z","expire_at":null,"status":"FULFILLED","amount":[{"denom":"uixo","amount":"1000"}],' +
      '"cw20_payment":[{"address":"ixo1cw20","amount":"18446744073709551615"}],"from_address":"","escrow_address":"ixo1escrow",' +
      '"cw1155_payment":[],"cw1155_intent_payment":[{"address":"ixo1c1155","tokens":[{"token_id":"tok","amount":"2"}]}],' +
      '"member_address":"ixo1member"}}',
  },
  {
    path: '/ixo/claims/claim/c1',
    method: `${CLAIMS}Claim`,
    request: message(bytes(1, 'c1')),
    answer: message(
      msg(
        1,
        bytes(1, '1'),
        bytes(5, 'c1'),
        msg(6, bytes(1, 'c1'), num(6, 5), num(7, 3), coin(10, 'uixo')),
        msg(7, num(3, 4)),
        num(8, true),
        msg(10, bytes(1, 'cw'), num(3, 5)),
        msg(11, bytes(1, 'c1155'), bytes(2, 'a'), bytes(2, 'b'), num(3, 2)),
        bytes(13, 'm'),
        msg(14, num(6, 1), time(9, 0, 1)),
      ),
    ),
    json:
      '{"claim":{"collection_id":"1","agent_did":"","agent_address":"","submission_date":null,"claim_id":"c1",' +
      '"evaluation":{"claim_id":"c1","collection_id":"","oracle":"","agent_did":"","agent_address":"","status":"FLAGGED","reason":3,' +
      '"verification_proof":"","evaluation_date":null,"amount":[{"denom":"uixo","amount":"0"}],"cw20_payment":[],"cw1155_payment":[],"cw1155_intent_payment":[]},' +
      '"payments_status":{"submission":"NO_PAYMENT","evaluation":"NO_PAYMENT","approval":"PAID","rejection":"NO_PAYMENT"},' +
      '"use_intent":true,"amount":[],"cw20_payment":[{"address":"cw","amount":"5"}],' +
      '"cw1155_payment":[{"address":"c1155","token_id":["a","b"],"amount":"2"}],"cw1155_intent_payment":[],"member_address":"m",' +
      '"evaluation_history":[{"claim_id":"","collection_id":"","oracle":"","agent_did":"","agent_address":"","status":"APPROVED","reason":0,' +
      '"verification_proof":"","evaluation_date":"1970-01-01T00:00:00.000000001Z","amount":[],"cw20_payment":[],"cw1155_payment":[],"cw1155_intent_payment":[]}]}}',
  },
  {
    path: '/ixo/claims/claim/none',
    method: `${CLAIMS}Claim`,
    request: message(bytes(1, 'none')),
    // An empty answer: the claim field is nullable=false on the chain, so a node shows an empty claim, not null.
    answer: message(),
    json:
      '{"claim":{"collection_id":"","agent_did":"","agent_address":"","submission_date":null,"claim_id":"","evaluation":null,' +
      '"payments_status":null,"use_intent":false,"amount":[],"cw20_payment":[],"cw1155_payment":[],"cw1155_intent_payment":[],' +
      '"member_address":"","evaluation_history":[]}}',
  },
  {
    path: '/ixo/claims/dispute/p1',
    method: `${CLAIMS}Dispute`,
    answer: message(
      msg(
        1,
        bytes(1, 'c1'),
        num(2, -1),
        msg(3, bytes(3, 'p1'), num(4, true)),
        num(4, 2),
        bytes(5, 'ixo1disputer'),
        bytes(6, 'did:x:disputer'),
        coin(7, 'uixo', '50'),
        num(9, 1),
        msg(10, bytes(1, 'did:adj'), time(4, 1717171717), coin(8, 'uixo', '40'), bytes(11, 'ixo1loser')),
      ),
    ),
    json:
      '{"dispute":{"subject_id":"c1","type":-1,"data":{"uri":"","type":"","proof":"p1","encrypted":true},' +
      '"target_role":"DISPUTE_TARGET_ROLE_EVALUATOR","disputer_address":"ixo1disputer","disputer_did":"did:x:disputer",' +
      '"dispute_deposit":[{"denom":"uixo","amount":"50"}],"submitted_at":null,"status":"DISPUTE_STATUS_AWARDED",' +
      '"resolution":{"adjudicator_did":"did:adj","adjudicator_address":"","adjudicator_payout_address":"","resolved_at":"2024-05-31T16:08:37Z",' +
      '"data":null,"intended_penalty":[],"actual_penalty_paid":[],"winner_amount":[{"denom":"uixo","amount":"40"}],"adjudicator_amount":[],' +
      '"winner_address":"","loser_address":"ixo1loser"}}}',
  },
  {
    path: '/ixo/claims/collection/5/member/m1',
    method: `${CLAIMS}CollectionMember`,
    request: message(bytes(1, '5'), bytes(2, 'm1')),
    answer: message(
      msg(
        1,
        bytes(1, '5'),
        bytes(2, 'm1'),
        time(3, 1, 500_000_000),
        coin(4, 'uixo', '100'),
        msg(6, bytes(1, 'cw'), num(3, 10)),
      ),
    ),
    json:
      '{"member_budget":{"collection_id":"5","member_address":"m1","period":"1.500s","period_spend_limit":[{"denom":"uixo","amount":"100"}],' +
      '"period_spent":[],"period_cw20_spend_limit":[{"address":"cw","amount":"10"}],"period_cw20_spent":[],"period_reset_at":null}}',
  },
  {
    path: '/ixo/claims/collection/5/deposit/a1',
    method: `${CLAIMS}AgentDepositBalance`,
    request: message(bytes(1, '5'), bytes(2, 'a1')),
    answer: message(msg(1, bytes(1, '5'), bytes(2, 'a1'), coin(3, 'uixo', '7'))),
    json: '{"balance":{"collection_id":"5","agent_address":"a1","amount":[{"denom":"uixo","amount":"7"}],"withdrawable_at":null}}',
  },
  {
    path: '/ixo/claims/collection/5',
    method: `${CLAIMS}Collection`,
    answer: message(
      msg(
        1,
        bytes(1, '5'),
        num(7, 0),
        num(13, 2),
        num(18, 1),
        num(20, 4),
        coin(23, 'uixo', '50'),
        num(25, 1),
        msg(29, bytes(1, 'did:adj'), bytes(2, '5000000000000000000')),
        msg(29, bytes(1, 'did:cheap'), bytes(2, '1')),
      ),
    ),
    json:
      '{"collection":{"id":"5","entity":"","admin":"","protocol":"","start_date":null,"end_date":null,"quota":"0","count":"0","evaluated":"0",' +
      '"approved":"0","rejected":"0","disputed":"0","state":"CLOSED","payments":null,"signer":"","invalidated":"0","escrow_account":"",' +
      '"intents":"DENY","flagged":"0","flagged_active":"4","service_agent_deposit_required":[],"evaluator_deposit_required":[],' +
      '"dispute_deposit_amount":[{"denom":"uixo","amount":"50"}],"penalty_amount_per_dispute":[],"disputes_open":"1","disputes_awarded":"0",' +
      '"disputes_dismissed":"0","min_deposit_period":"0s","adjudicators":[{"did":"did:adj","reward_percentage":"5.000000000000000000"},' +
      '{"did":"did:cheap","reward_percentage":"0.000000000000000001"}]}}',
  },
  {
    path: '/ixo/token/minter/m/c',
    method: `${TOKEN}TokenDoc`,
    request: message(bytes(1, 'm'), bytes(2, 'c')),
    answer: message(
      msg(
        1,
        bytes(1, 'm'),
        bytes(2, 'c'),
        bytes(9, '25'),
        num(11, true),
        msg(13, bytes(1, 'x'), bytes(3, '2')),
        msg(14, bytes(1, 't'), bytes(4, '3'), bytes(6, 'auth')),
      ),
    ),
    json:
      '{"tokenDoc":{"minter":"m","contract_address":"c","class":"","name":"","description":"","image":"","type":"","cap":"0","supply":"25",' +
      '"paused":false,"stopped":true,"retired":[],"cancelled":[{"id":"x","reason":"","amount":"2","owner":""}],' +
      '"transferred":[{"id":"t","reason":"","jurisdiction":"","amount":"3","owner":"","authorization_id":"auth"}]}}',
  },
  {
    path: '/cosmos/bank/v1beta1/balances/ixo1a?pagination.limit=1',
    method: `${BANK}AllBalances`,
    request: message(bytes(1, 'ixo1a'), msg(2, num(3, 1))),
    answer: message(
      coin(1, 'uixo', '123456789012345678901234567890'),
      coin(1, 'xusd'),
      msg(2, bytes(1, Buffer.from([1, 2])), num(2, 2)),
    ),
    json:
      '{"balances":[{"denom":"uixo","amount":"123456789012345678901234567890"},{"denom":"xusd","amount":"0"}],' +
      '"pagination":{"next_key":"AQI=","total":"2"}}',
  },
  {
    path: '/cosmos/distribution/v1beta1/community_pool',
    method: '/cosmos.distribution.v1beta1.Query/CommunityPool',
    answer: message(coin(1, 'uixo', '1234500000000000000000'), coin(1, 'xusd', '-5'), coin(1, 'zero')),
    json:
      '{"pool":[{"denom":"uixo","amount":"1234.500000000000000000"},{"denom":"xusd","amount":"-0.000000000000000005"},' +
      '{"denom":"zero","amount":"0.000000000000000000"}]}',
  },
  {
    path: '/cosmos/auth/v1beta1/accounts/ixo1a',
    method: '/cosmos.auth.v1beta1.Query/Account',
    answer: message(
      msg(
        1,
        bytes(1, '/cosmos.auth.v1beta1.BaseAccount'),
        msg(
          2,
          bytes(1, 'ixo1a'),
          msg(2, bytes(1, '/cosmos.crypto.secp256k1.PubKey'), msg(2, bytes(1, Buffer.from([1, 2, 3])))),
          num(3, 7),
        ),
      ),
    ),
    json:
      '{"account":{"@type":"/cosmos.auth.v1beta1.BaseAccount","address":"ixo1a",' +
      '"pub_key":{"@type":"/cosmos.crypto.secp256k1.PubKey","key":"AQID"},"account_number":"7","sequence":"0"}}',
  },
  {
    path: '/cosmos/staking/v1beta1/validators/ixovaloper1v',
    method: '/cosmos.staking.v1beta1.Query/Validator',
    request: message(bytes(1, 'ixovaloper1v')),
    answer: message(
      msg(
        1,
        bytes(1, 'ixovaloper1v'),
        msg(2, bytes(1, '/cosmos.crypto.ed25519.PubKey'), msg(2, bytes(1, Buffer.from([9])))),
        num(4, 3),
        bytes(5, '1000'),
        bytes(6, '1000000000000000000000'),
        msg(7, bytes(1, 'val')),
        num(13, 4),
        num(13, 5),
      ),
    ),
    // unbonding_time, commission and min_self_delegation are non-nullable: absent, they are Go zero values.
    json:
      '{"validator":{"operator_address":"ixovaloper1v","consensus_pubkey":{"@type":"/cosmos.crypto.ed25519.PubKey","key":"CQ=="},' +
      '"jailed":false,"status":"BOND_STATUS_BONDED","tokens":"1000","delegator_shares":"1000.000000000000000000",' +
      '"description":{"moniker":"val","identity":"","website":"","security_contact":"","details":""},"unbonding_height":"0",' +
      '"unbonding_time":"0001-01-01T00:00:00Z","commission":{"commission_rates":{"rate":"0.000000000000000000",' +
      '"max_rate":"0.000000000000000000","max_change_rate":"0.000000000000000000"},"update_time":"0001-01-01T00:00:00Z"},' +
      '"min_self_delegation":"0","unbonding_on_hold_ref_count":"0","unbonding_ids":["4","5"]}}',
  },
  {
    path: '/ixo/epochs/v1beta1/epochs',
    method: '/ixo.epochs.v1beta1.Query/EpochInfos',
    // start_time and current_epoch_start_time are non-nullable stdtime: absent, Go's zero time.
    answer: message(msg(1, bytes(1, 'day'), time(3, 86400), num(4, 5), num(8, 1250000))),
    json:
      '{"epochs":[{"identifier":"day","start_time":"0001-01-01T00:00:00Z","duration":"86400s","current_epoch":"5",' +
      '"current_epoch_start_time":"0001-01-01T00:00:00Z","epoch_counting_started":false,"current_epoch_start_height":"1250000"}]}',
  },
  {
    path: '/ixo/mint/v1beta1/params',
    method: '/ixo.mint.v1beta1.Query/Params',
    answer: message(
      msg(
        1,
        bytes(1, 'uixo'),
        bytes(2, '250000000000000000000000'),
        bytes(3, 'day'),
        msg(7, bytes(1, 'ixo1r'), bytes(2, '500000000000000000')),
      ),
    ),
    json:
      '{"params":{"mint_denom":"uixo","genesis_epoch_provisions":"250000.000000000000000000","epoch_identifier":"day",' +
      '"reduction_period_in_epochs":"0","reduction_factor":"0.000000000000000000","distribution_proportions":{"staking":"0.000000000000000000",' +
      '"impact_rewards":"0.000000000000000000","community_pool":"0.000000000000000000"},' +
      '"weighted_impact_rewards_receivers":[{"address":"ixo1r","weight":"0.500000000000000000"}],"minting_rewards_distribution_start_epoch":"0"}}',
  },
];

const identity = (value: Buffer) => value;
const FIXTURES = fileURLToPath(new URL('./fixtures/gateway/', import.meta.url));

/** A node answering every golden method by path with its bytes; the requests it got are kept by path. */
async function startGoldenNode(t: Test, descriptorFiles?: readonly string[]) {
  const requests = new Map<string, Buffer>();
  const server = new grpc.Server();
  // Built here method by method (the type's index signature is read-only for services built once).
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  const byMethod = new Map<string, Golden[]>();
  for (const golden of GOLDEN) byMethod.set(golden.method, [...(byMethod.get(golden.method) ?? []), golden]);
  let index = 0;
  for (const [method, goldens] of byMethod) {
    const name = `m${index++}`;
    definition[name] = {
      path: method,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    implementation[name] = (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      // Several goldens share a method: the request's first string field tells them apart.
      const golden = goldens.find((g) => !g.request || g.request.equals(call.request)) ?? goldens[0];
      requests.set(golden.path, call.request);
      callback(null, golden.answer);
    };
  }
  if (descriptorFiles) {
    const writer = new protobuf.Writer();
    for (const file of fileDescriptorsOf(loadProtoFiles(descriptorFiles, [PROTO_DIR, FIXTURES])))
      writer.uint32(10).bytes(file);
    const files = Buffer.from(writer.finish());
    definition.files = {
      path: '/cosmos.reflection.v1.ReflectionService/FileDescriptors',
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    implementation.files = (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, files);
  }
  server.addService(definition, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  t.teardown(() => server.forceShutdown());
  return { target: `127.0.0.1:${port}`, requests };
}

const MODES: [string, string, readonly string[] | undefined][] = [
  ['bundled .proto files', 'bundled', undefined],
  ["the node's reflection descriptors", 'reflection', BUNDLED_FILES],
  // The kitchen module is one only the node knows: its route shows the node's descriptors were read.
  [
    'auto: the node describes claims (and a module of its own), token comes from the bundled files',
    'auto',
    ['ixo/claims/v1beta1/query.proto', 'kitchen.proto'],
  ],
];

for (const [title, mode, descriptorFiles] of MODES) {
  t.test(title, async (t) => {
    const node = await startGoldenNode(t, descriptorFiles);
    const server = await startTestServer(t, { env: { GATEWAY_GRPC_TARGET: node.target, GATEWAY_DESCRIPTORS: mode } });
    for (const golden of GOLDEN) {
      const res = await fetch(server.url + golden.path);
      t.equal(res.status, 200, golden.path);
      t.equal(await res.text(), golden.json, golden.path);
      if (golden.request)
        t.same([...node.requests.get(golden.path)!], [...golden.request], `${golden.path}: request field numbers`);
    }
    const ownModule = await fetch(`${server.url}/test/kitchen/abc`);
    t.equal(
      ownModule.status,
      mode === 'auto' ? 501 : 404,
      'a module only the node describes is routed in auto mode (and not implemented by this node)',
    );
  });
}
