// Thread: main
// ixo.token.v1beta1.Query over the sample data.
import { found, pageBy, recordBy, required, type QueryHandler } from '../query-handler.js';

export const tokenQueries: Record<string, QueryHandler> = {
  Params: (_request, state) => ({ params: state.get('tokenParams') }),
  TokenMetadata: (request, state) => {
    required(request, 'id');
    // The stored record is the whole response.
    return found(state, 'tokenMetadata', request.id, 'token metadata');
  },
  TokenList: pageBy('token', 'tokenDocs', 'minter'),
  TokenDoc: recordBy('token', 'tokenDoc', 'token', 'minter', 'contract_address'),
};
