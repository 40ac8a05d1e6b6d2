// Thread: main
// GET /models: the catalogue a client's model picker shows (the client SDK's useModels; public, as there).
import { reply } from '../../http/types.js';
import { ModelsResponseSchema } from './answer-schemas.js';
import type { ModelCatalogue } from '../chat/models.js';
import { route } from './deps.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export function modelRoutes(catalogue: ModelCatalogue) {
  const body = JSON.stringify(catalogue.response());
  return [
    route({
      method: 'GET',
      path: '/models',
      auth: 'public',
      summary: 'The models a message may ask for (`model`), the default flagged',
      tags: ['Models'],
      responses: { 200: { description: 'The catalogue', schema: ModelsResponseSchema } },
      handler: () => reply.raw(200, JSON_TYPE, body),
    }),
  ];
}
