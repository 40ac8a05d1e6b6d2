// Thread: actor host
// The user-preferences plugin's actor half: a per (user, oracle) record, the `set_user_preferences` tool and a
// before-agent hook so the first turn of a new session sees them. Its GET /user-preferences route: front.ts.
import type { OraclePlugin, PluginDeps } from '../types.js';
import { preferencesStore } from './store.js';
import { setUserPreferencesTool } from './tool.js';

export function userPreferencesPlugin(deps: Pick<PluginDeps, 'repositories'>): OraclePlugin {
  const preferences = preferencesStore(deps.repositories.preferences);
  const tool = setUserPreferencesTool(preferences);
  return {
    name: 'user-preferences',
    tools() {
      return [tool];
    },
    async beforeAgent(context) {
      context.preferences = await preferences.get(context.userDid, context.oracleDid);
    },
  };
}
