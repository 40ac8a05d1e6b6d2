// Thread: main
// The record families of the embedded query node: protobuf type, LMDB key prefix and key of each record.
// Keys are laid out like a chain's KV store (module/family/...), so listing a family (or a sub-range,
// e.g. one collection's members) is a range scan and pagination keys are the keys after the prefix.

// biome-ignore lint/suspicious/noExplicitAny: fixture records are JSON of any protobuf message
type Json = Record<string, any>;

export interface RecordFamily {
  readonly type: string;
  readonly prefix: string;
  /** The key of a record after the prefix; absent: the fixture gives records as an object keyed by it. */
  readonly keyOf?: (record: Json) => string;
  /** One record at exactly `prefix` (module params). */
  readonly single?: true;
}

const one = (type: string, key: string): RecordFamily => ({ type, prefix: key, single: true });

export const RECORDS = {
  entityParams: one('ixo.entity.v1beta1.Params', 'entity/params'),
  entity: { type: 'ixo.entity.v1beta1.Entity', prefix: 'entity/entities/', keyOf: (r) => r.id },
  iidDocument: { type: 'ixo.iid.v1beta1.IidDocument', prefix: 'iid/documents/', keyOf: (r) => r.id },
  claimsParams: one('ixo.claims.v1beta1.Params', 'claims/params'),
  collection: { type: 'ixo.claims.v1beta1.Collection', prefix: 'claims/collections/', keyOf: (r) => r.id },
  claim: { type: 'ixo.claims.v1beta1.Claim', prefix: 'claims/claims/', keyOf: (r) => r.claim_id },
  dispute: { type: 'ixo.claims.v1beta1.Dispute', prefix: 'claims/disputes/', keyOf: (r) => r.data?.proof ?? '' },
  intent: {
    type: 'ixo.claims.v1beta1.Intent',
    prefix: 'claims/intents/',
    keyOf: (r) => `${r.agent_address}/${r.collection_id}/${r.id}`,
  },
  member: {
    type: 'ixo.claims.v1beta1.MemberBudget',
    prefix: 'claims/members/',
    keyOf: (r) => `${r.collection_id}/${r.member_address}`,
  },
  deposit: {
    type: 'ixo.claims.v1beta1.AgentDepositBalance',
    prefix: 'claims/deposits/',
    keyOf: (r) => `${r.collection_id}/${r.agent_address}`,
  },
  tokenParams: one('ixo.token.v1beta1.Params', 'token/params'),
  token: {
    type: 'ixo.token.v1beta1.Token',
    prefix: 'token/tokens/',
    keyOf: (r) => `${r.minter}/${r.contract_address}`,
  },
  tokenMetadata: { type: 'ixo.token.v1beta1.QueryTokenMetadataResponse', prefix: 'token/metadata/' },
  bondsParams: one('ixo.bonds.v1beta1.Params', 'bonds/params'),
  bond: { type: 'ixo.bonds.v1beta1.Bond', prefix: 'bonds/bonds/', keyOf: (r) => r.bond_did },
  batch: { type: 'ixo.bonds.v1beta1.Batch', prefix: 'bonds/batches/', keyOf: (r) => r.bond_did },
  bankParams: one('cosmos.bank.v1beta1.Params', 'bank/params'),
  balance: { type: 'cosmos.bank.v1beta1.Balance', prefix: 'bank/balances/', keyOf: (r) => r.address },
  lastBatch: { type: 'ixo.bonds.v1beta1.Batch', prefix: 'bonds/last-batches/', keyOf: (r) => r.bond_did },
} satisfies Record<string, RecordFamily>;

export type RecordKind = keyof typeof RECORDS;

/**
 * The fixture file: the node's block height and, per family, records in Cosmos REST JSON: an object for
 * params, an array for families with a key field, an object keyed by id otherwise (token metadata).
 */
export interface LocalNodeFixture {
  height: string;
  records: Partial<Record<RecordKind, Json | Json[]>>;
}
