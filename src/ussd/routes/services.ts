// Thread: main (front door)
// GET /api/ussd/services, the USSD services new dials get (id, version, name, codes),
// for the playground's phone and `npm run ussd` to list and dial.
import * as v from 'valibot';
import { declarer } from '../../http/route.js';
import { reply } from '../../http/types.js';
import type { UssdRouteDeps } from './index.js';

const ServiceListSchema = v.object({
  services: v.array(
    v.object({
      id: v.string(),
      version: v.string(),
      name: v.string(),
      codes: v.array(
        v.object({
          code: v.pipe(v.string(), v.examples(['*384#'])),
          start: v.optional(v.pipe(v.string(), v.description('The state this code starts at'))),
        }),
      ),
    }),
  ),
});

const route = declarer<void>();

export function serviceRoutes({ services }: UssdRouteDeps) {
  return [
    route({
      method: 'GET',
      path: '/api/ussd/services',
      auth: 'public',
      summary: 'The USSD services this gateway serves, each at the version new dials get, with its service codes',
      tags: ['ussd'],
      responses: { 200: { description: 'The services', schema: ServiceListSchema } },
      handler: () => reply.json(200, { services: services?.current() ?? [] }),
    }),
  ];
}
