// Thread: main
// ixo.entity.v1beta1.Query over the sample data.
import { found, pageBy, required, type QueryHandler } from '../query-handler.js';
import type { ChainState } from '../state.js';

const entityOf = (state: ChainState, id: string) => found(state, 'entity', id, 'entity');
const iidDocumentOf = (state: ChainState, id: string) => found(state, 'iidDocument', id, 'iid document');

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
  EntityList: pageBy('entity', 'entities'),
};
