// Thread: main (front door)
// The front halves of the plugins createPlugins enables, and their routes.
import type { AnyRoute } from '../../http/route.js';
import type { AuthIdentity } from '../auth/index.js';
import type { PluginDeps, PluginFront, PluginRouteDeps } from './types.js';
import { userPreferencesFront } from './user-preferences/front.js';

/** The front halves of this configuration's plugins (credits has none: it only charges turns). */
export function createPluginFronts(deps: PluginDeps): PluginFront[] {
  return [userPreferencesFront(deps)];
}

/** The plugins' route declarations, mounted by the face with its own (see route-auth.ts for public ones). */
export function pluginRoutes(fronts: readonly PluginFront[], deps: PluginRouteDeps): AnyRoute<AuthIdentity>[] {
  return fronts.flatMap((front) => front.routes?.(deps) ?? []);
}

/** Route patterns the plugins declare public (merged by the auth layer with AUTH_EXCLUDED_ROUTES). */
export function pluginAuthExcludedRoutes(fronts: readonly PluginFront[]): string[] {
  return fronts.flatMap((front) => front.getAuthExcludedRoutes?.() ?? []);
}
