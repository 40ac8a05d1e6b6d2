// Thread: main (front door)
// The user-preferences plugin's front half, its GET /user-preferences route.
import type { PluginDeps, PluginFront } from '../types.js';
import { userPreferencesRoute } from './route.js';
import { preferencesStore } from './store.js';

export function userPreferencesFront(deps: Pick<PluginDeps, 'repositories'>): PluginFront {
  const preferences = preferencesStore(deps.repositories.preferences);
  return {
    name: 'user-preferences',
    routes(routeDeps) {
      return [userPreferencesRoute(routeDeps, preferences)];
    },
  };
}
