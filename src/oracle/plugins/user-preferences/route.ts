// GET /user-preferences: the caller's saved preferences for this oracle, or JSON null.
import type { Router } from '../../../http/router.js';
import { reply } from '../../../http/types.js';
import type { PluginRouteDeps } from '../types.js';
import * as v from 'valibot';
import { UserPreferencesRecordSchema } from './schema.js';
import type { PreferencesStore } from './store.js';

export function registerUserPreferencesRoute(router: Router, deps: PluginRouteDeps, preferences: PreferencesStore): void {
  router.get(
    '/user-preferences',
    async function getUserPreferences(req) {
      const userDid = await deps.authenticate(req);
      return reply.json(200, await preferences.get(userDid, deps.oracleDid));
    },
    {
      summary: "The authenticated user's preferences for this oracle (null when none are saved)",
      tags: ['User preferences'],
      responses: {
        200: { description: 'The saved preferences, or null', schema: v.nullable(UserPreferencesRecordSchema) },
      },
    },
  );
}
