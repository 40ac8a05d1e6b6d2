// ixo.claims.v1beta1.Query over the sample data.
import { nodeErrors, pageOf, required, type Message, type QueryHandler } from '../query-handler.js';
import type { ChainState } from '../state.js';
import type { RecordKind } from '../records.js';

function found(state: ChainState, kind: RecordKind, key: string, what: string): Message {
  const record = state.get(kind, key);
  if (!record) throw nodeErrors.notFound(what, key);
  return record;
}

export const claimsQueries: Record<string, QueryHandler> = {
  Params: (_request, state) => ({ params: state.get('claimsParams') }),
  Collection: (request, state) => {
    required(request, 'id');
    return { collection: found(state, 'collection', request.id, 'collection') };
  },
  CollectionList: (request, state) => {
    const page = pageOf(() => state.page('collection', request.pagination));
    return { collections: page.items, pagination: page.pagination };
  },
  Claim: (request, state) => {
    required(request, 'id');
    return { claim: found(state, 'claim', request.id, 'claim') };
  },
  ClaimList: (request, state) => {
    const page = pageOf(() => state.page('claim', request.pagination));
    return { claims: page.items, pagination: page.pagination };
  },
  Dispute: (request, state) => {
    required(request, 'proof');
    return { dispute: found(state, 'dispute', request.proof, 'dispute') };
  },
  DisputeList: (request, state) => {
    const page = pageOf(() => state.page('dispute', request.pagination));
    return { disputes: page.items, pagination: page.pagination };
  },
  Intent: (request, state) => {
    required(request, 'agentAddress', 'collectionId', 'id');
    return { intent: found(state, 'intent', `${request.agentAddress}/${request.collectionId}/${request.id}`, 'intent') };
  },
  IntentList: (request, state) => {
    const page = pageOf(() => state.page('intent', request.pagination));
    return { intents: page.items, pagination: page.pagination };
  },
  CollectionMember: (request, state) => {
    required(request, 'collectionId', 'memberAddress');
    return { member: found(state, 'member', `${request.collectionId}/${request.memberAddress}`, 'member') };
  },
  CollectionMemberList: (request, state) => {
    required(request, 'collectionId');
    const page = pageOf(() => state.page('member', request.pagination, `${request.collectionId}/`));
    return { members: page.items, pagination: page.pagination };
  },
  DisputeBySubject: (request, state) => {
    required(request, 'subjectId', 'targetRole');
    const [dispute] = state.filter('dispute', (d) => d.subject_id === request.subjectId && d.target_role === request.targetRole);
    if (!dispute) throw nodeErrors.notFound('dispute for subject', `${request.subjectId}/${request.targetRole}`);
    return { dispute };
  },
  DisputeListForSubject: (request, state) => {
    required(request, 'subjectId');
    return { disputes: state.filter('dispute', (d) => d.subject_id === request.subjectId) };
  },
  AgentDepositBalance: (request, state) => {
    required(request, 'collectionId', 'agentAddress');
    return { balance: found(state, 'deposit', `${request.collectionId}/${request.agentAddress}`, 'deposit balance') };
  },
  AgentDepositBalanceList: (request, state) => {
    required(request, 'collectionId');
    const page = pageOf(() => state.page('deposit', request.pagination, `${request.collectionId}/`));
    return { balances: page.items, pagination: page.pagination };
  },
};
