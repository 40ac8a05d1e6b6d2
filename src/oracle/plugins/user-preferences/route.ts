// Thread: main (front door)
// GET /user-preferences, the caller's saved preferences for this oracle, or JSON null.
import * as v from 'valibot';
import { reply } from '../../../http/types.js';
import { AUTH_RESPONSES, route } from '../../routes/deps.js';
import type { PluginRouteDeps } from '../types.js';
import { UserPreferencesRecordSchema } from './schema.js';
import type { PreferencesStore } from './store.js';

export function userPreferencesRoute(deps: PluginRouteDeps, preferences: PreferencesStore) {
  return route({
    method: 'GET',
    path: '/user-preferences',
    auth: 'ucan',
    summary: "The authenticated user's preferences for this oracle (null when none are saved)",
    tags: ['User preferences'],
    responses: {
      200: { description: 'The saved preferences, or null', schema: v.nullable(UserPreferencesRecordSchema) },
      401: AUTH_RESPONSES[401],
    },
    async handler({ identity }) {
      return reply.json(200, await preferences.get(identity.did, deps.oracleDid));
    },
  });
}
