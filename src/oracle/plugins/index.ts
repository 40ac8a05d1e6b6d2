// Thread: actor host
// The oracle's plugins (their actor halves) and the few operations over all of them. The front halves: front.ts.
import type { Tool, TurnContext } from '../chat/agent-types.js';
import { creditsPlugin } from './credits/index.js';
import type { OraclePlugin, PluginDeps } from './types.js';
import { userPreferencesPlugin } from './user-preferences/index.js';

export type { OraclePlugin, PluginConfig, PluginDeps, PluginFront, PluginRouteDeps } from './types.js';

/** The plugins this configuration enables; each thread that needs them builds its own list. */
export function createPlugins(deps: PluginDeps): OraclePlugin[] {
  const plugins: OraclePlugin[] = [];
  // Credits first: a refused turn does no other work.
  if (deps.config.CREDITS_ENABLED) plugins.push(creditsPlugin(deps));
  plugins.push(userPreferencesPlugin(deps));
  return plugins;
}

/** Runs every before-agent hook in order; the first DomainError (credits_exhausted) stops the turn. */
export async function runBeforeAgent(plugins: readonly OraclePlugin[], context: TurnContext): Promise<void> {
  for (const plugin of plugins) await plugin.beforeAgent?.(context);
}

export function pluginTools(plugins: readonly OraclePlugin[], context: TurnContext): Tool[] {
  return plugins.flatMap((plugin) => plugin.tools?.(context) ?? []);
}
