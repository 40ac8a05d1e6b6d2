// Thread: main
// ixo.claims.v1beta1.Query over the sample data.
import { nodeErrors, pageBy, recordBy, required, type QueryHandler } from '../query-handler.js';

export const claimsQueries: Record<string, QueryHandler> = {
  Params: (_request, state) => ({ params: state.get('claimsParams') }),
  Collection: recordBy('collection', 'collection', 'collection', 'id'),
  CollectionList: pageBy('collection', 'collections'),
  Claim: recordBy('claim', 'claim', 'claim', 'id'),
  ClaimList: pageBy('claim', 'claims'),
  Dispute: recordBy('dispute', 'dispute', 'dispute', 'proof'),
  DisputeList: pageBy('dispute', 'disputes'),
  Intent: recordBy('intent', 'intent', 'intent', 'agentAddress', 'collectionId', 'id'),
  IntentList: pageBy('intent', 'intents'),
  CollectionMember: recordBy('member', 'member_budget', 'member', 'collectionId', 'memberAddress'),
  CollectionMemberList: pageBy('member', 'member_budgets', 'collectionId'),
  DisputeBySubject: (request, state) => {
    required(request, 'subjectId', 'targetRole');
    const [dispute] = state.filter(
      'dispute',
      (d) => d.subject_id === request.subjectId && d.target_role === request.targetRole,
    );
    if (!dispute) throw nodeErrors.notFound('dispute for subject', `${request.subjectId}/${request.targetRole}`);
    return { dispute };
  },
  DisputeListForSubject: (request, state) => {
    required(request, 'subjectId');
    return { disputes: state.filter('dispute', (d) => d.subject_id === request.subjectId) };
  },
  AgentDepositBalance: recordBy('deposit', 'balance', 'deposit balance', 'collectionId', 'agentAddress'),
  AgentDepositBalanceList: pageBy('deposit', 'balances', 'collectionId'),
};
