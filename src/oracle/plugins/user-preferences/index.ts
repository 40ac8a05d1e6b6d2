// The user-preferences plugin: a per (user, oracle) record, the `set_user_preferences` tool, the
// GET /user-preferences route, and a before-agent hook so the first turn of a new session sees them.
import type { OraclePlugin, PluginDeps } from '../types.js';
import { userPreferencesRoute } from './route.js';
import { preferencesStore } from './store.js';
import { setUserPreferencesTool } from './tool.js';

export function userPreferencesPlugin(deps: Pick<PluginDeps, 'repositories'>): OraclePlugin {
  const preferences = preferencesStore(deps.repositories.preferences);
  const tool = setUserPreferencesTool(preferences);
  return {
    name: 'user-preferences',
    routes(routeDeps) {
      return [userPreferencesRoute(routeDeps, preferences)];
    },
    tools() {
      return [tool];
    },
    async beforeAgent(context) {
      context.preferences = await preferences.get(context.userDid, context.oracleDid);
    },
  };
}
