// ixo.iid.v1beta1.Query over the sample data.
import { nodeErrors, pageOf, required, type QueryHandler } from '../query-handler.js';

export const iidQueries: Record<string, QueryHandler> = {
  IidDocuments: (request, state) => {
    const page = pageOf(() => state.page('iidDocument', request.pagination));
    return { iidDocuments: page.items, pagination: page.pagination };
  },
  IidDocument: (request, state) => {
    required(request, 'id');
    const document = state.get('iidDocument', request.id);
    if (!document) throw nodeErrors.notFound('did document', request.id);
    return { iidDocument: document };
  },
};
