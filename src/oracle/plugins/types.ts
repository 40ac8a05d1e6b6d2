// Thread: any
// The plugin contract of the oracle face, in two halves that load on different threads: the actor half
// (OraclePlugin: tools and a before-agent hook, in the chat actor's host) and the front half (PluginFront: routes,
// and routes that need no authentication, on the main thread). Actor code never loads a front half.
import type { AnyRoute } from '../../http/route.js';
import type { Tool, TurnContext } from '../chat/agent-types.js';
import type { AuthIdentity } from '../auth/index.js';
import type { OracleRepositories } from '../repositories.js';

/** What plugin routes get from the oracle face. */
export interface PluginRouteDeps {
  /** This oracle's DID (the audience of the users' UCANs). */
  readonly oracleDid: string;
}

/** The configuration plugins read (a subset of Config, so tests can pass just these). */
export interface PluginConfig {
  readonly CREDITS_ENABLED: boolean;
  readonly CREDITS_INITIAL: number;
  readonly CREDITS_PER_MESSAGE: number;
}

export interface PluginDeps {
  readonly config: PluginConfig;
  readonly repositories: Pick<OracleRepositories, 'preferences' | 'credits'>;
}

/** A plugin's front half (main thread). */
export interface PluginFront {
  readonly name: string;
  /** Its HTTP routes, declared like the face's own (http/route.ts); a `ucan` route's handler gets the caller. */
  routes?(deps: PluginRouteDeps): AnyRoute<AuthIdentity>[];
  /** Route patterns (uWS syntax, as registered) that are public. */
  getAuthExcludedRoutes?(): string[];
}

/** A plugin's actor half (worker thread). */
export interface OraclePlugin {
  readonly name: string;
  /** Tools offered to the agent for one turn (worker thread). */
  tools?(context: TurnContext): Tool[];
  /**
   * Runs before the agent of a turn is built: loads what the prompt needs (it may set fields of `context`)
   * or refuses the turn by throwing a DomainError (credits: `credits_exhausted`, answered 402 by the face).
   * The actor runs it before a stream opens.
   */
  beforeAgent?(context: TurnContext): Promise<void>;
}
