// ixo.entity.v1beta1.Query over the sample data.
import { nodeErrors, pageOf, required, type QueryHandler } from '../query-handler.js';
import type { ChainState } from '../state.js';

function entityOf(state: ChainState, id: string) {
  const entity = state.get('entity', id);
  if (!entity) throw nodeErrors.notFound('entity', id);
  return entity;
}

function iidDocumentOf(state: ChainState, id: string) {
  const document = state.get('iidDocument', id);
  if (!document) throw nodeErrors.notFound('iid document', id);
  return document;
}

export const entityQueries: Record<string, QueryHandler> = {
  Params: (_request, state) => ({ params: state.get('entityParams') }),
  Entity: (request, state) => {
    required(request, 'id');
    return { entity: entityOf(state, request.id), iidDocument: iidDocumentOf(state, request.id) };
  },
  EntityMetaData: (request, state) => {
    required(request, 'id');
    return { entity: entityOf(state, request.id) };
  },
  EntityIidDocument: (request, state) => {
    required(request, 'id');
    entityOf(state, request.id);
    return { iidDocument: iidDocumentOf(state, request.id) };
  },
  EntityVerified: (request, state) => {
    required(request, 'id');
    return { entity_verified: entityOf(state, request.id).entity_verified };
  },
  EntityList: (request, state) => {
    const page = pageOf(() => state.page('entity', request.pagination));
    return { entities: page.items, pagination: page.pagination };
  },
};
