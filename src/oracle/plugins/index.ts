// The oracle's plugins and the few operations over all of them.
import type { Tool, TurnContext } from '../agent-types.js';
import { creditsPlugin } from './credits/index.js';
import type { OraclePlugin, PluginDeps, PluginRouteDeps } from './types.js';
import { userPreferencesPlugin } from './user-preferences/index.js';

export type { OraclePlugin, PluginConfig, PluginDeps, PluginRouteDeps } from './types.js';

/** The plugins this configuration enables; each thread that needs them builds its own list. */
export function createPlugins(deps: PluginDeps): OraclePlugin[] {
  const plugins: OraclePlugin[] = [];
  // Credits first: a refused turn does no other work.
  if (deps.config.CREDITS_ENABLED) plugins.push(creditsPlugin(deps));
  plugins.push(userPreferencesPlugin(deps));
  return plugins;
}

/** The plugins' route declarations, mounted by the face with its own (see route-auth.ts for public ones). */
export function pluginRoutes(plugins: readonly OraclePlugin[], deps: PluginRouteDeps) {
  return plugins.flatMap((plugin) => plugin.routes?.(deps) ?? []);
}

/** Route patterns the plugins declare public (merged by the auth layer with AUTH_EXCLUDED_ROUTES). */
export function pluginAuthExcludedRoutes(plugins: readonly OraclePlugin[]): string[] {
  return plugins.flatMap((plugin) => plugin.getAuthExcludedRoutes?.() ?? []);
}

/** Runs every before-agent hook in order; the first DomainError (credits_exhausted) stops the turn. */
export async function runBeforeAgent(plugins: readonly OraclePlugin[], context: TurnContext): Promise<void> {
  for (const plugin of plugins) await plugin.beforeAgent?.(context);
}

export function pluginTools(plugins: readonly OraclePlugin[], context: TurnContext): Tool[] {
  return plugins.flatMap((plugin) => plugin.tools?.(context) ?? []);
}
