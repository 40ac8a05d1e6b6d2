// The plugin contract of the oracle face. A plugin may add routes (main thread), tools and a
// before-agent hook (chat actor, worker thread), and name routes that need no authentication.
import type { Router } from '../../http/router.js';
import type { HttpRequest } from '../../http/types.js';
import type { Store } from '../../store/env.js';
import type { Tool, TurnContext } from '../agent-types.js';

/** What plugin routes get from the oracle face. */
export interface PluginRouteDeps {
  /**
   * Resolves the DID of the authenticated user of a request (the UCAN issuer), or throws the
   * HttpError 401 of the auth layer. Plugin routes call it first unless they are auth-excluded.
   */
  authenticate(req: HttpRequest): Promise<string>;
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
  readonly store: Store;
}

export interface OraclePlugin {
  readonly name: string;
  /** Registers HTTP routes (main thread). */
  routes?(router: Router, deps: PluginRouteDeps): void;
  /** Tools offered to the agent for one turn (worker thread). */
  tools?(context: TurnContext): Tool[];
  /** Route patterns (uWS syntax, as registered) that are public. */
  getAuthExcludedRoutes?(): string[];
  /**
   * Runs before the agent of a turn is built: loads what the prompt needs (it may set fields of `context`)
   * or refuses the turn by throwing a DomainError (credits: `credits_exhausted`, answered 402 by the face).
   * The actor runs it before a stream opens.
   */
  beforeAgent?(context: TurnContext): Promise<void>;
}
