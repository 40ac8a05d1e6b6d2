// ixo.token.v1beta1.Query over the sample data.
import { nodeErrors, pageOf, required, type QueryHandler } from '../query-handler.js';

export const tokenQueries: Record<string, QueryHandler> = {
  Params: (_request, state) => ({ params: state.get('tokenParams') }),
  TokenMetadata: (request, state) => {
    required(request, 'id');
    const metadata = state.get('tokenMetadata', request.id);
    if (!metadata) throw nodeErrors.notFound('token metadata', request.id);
    return metadata;
  },
  TokenList: (request, state) => {
    required(request, 'minter');
    const page = pageOf(() => state.page('token', request.pagination, `${request.minter}/`));
    return { pagination: page.pagination, tokenDocs: page.items };
  },
  TokenDoc: (request, state) => {
    required(request, 'minter', 'contract_address');
    const token = state.get('token', `${request.minter}/${request.contract_address}`);
    if (!token) throw nodeErrors.notFound('token', `${request.minter}/${request.contract_address}`);
    return { tokenDoc: token };
  },
};
