// Thread: main (front door)
// Which of the oracle plugins' routes are public. Plugins declare their routes like the face's own
// (http/route.ts); a route named by a plugin (`getAuthExcludedRoutes()`) or by AUTH_EXCLUDED_ROUTES is mounted
// and documented as public. Entries are uWS-style patterns or paths: `/webhooks/*`, `/hooks/:id`, `/docs/(.*)`.
import type { AnyRoute } from '../../http/route.js';
import type { AuthIdentity, UcanAuthenticator } from '../auth/index.js';

/** A path matcher for one exclusion entry. */
export function exclusionMatcher(entry: string): RegExp {
  const source = entry
    .trim()
    .replace(/\/+$/, '')
    .split(/(\(\.\*\)|\*|:[A-Za-z0-9_]+)/)
    .map((part) => {
      if (part === '(.*)' || part === '*') return '.*';
      if (part.startsWith(':')) return '[^/]+';
      return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}/?$`);
}

export class OracleRouteAuth {
  readonly #authenticator: UcanAuthenticator;
  readonly #excluded: RegExp[];

  constructor(authenticator: UcanAuthenticator, excludedRoutes: readonly string[]) {
    this.#authenticator = authenticator;
    this.#excluded = excludedRoutes.filter((entry) => entry.trim()).map(exclusionMatcher);
  }

  /** Whether a path (or a route pattern, read as a path) is public. */
  isPublic(path: string): boolean {
    return this.#excluded.some((matcher) => matcher.test(path));
  }

  /**
   * The routes as they are mounted: a `ucan` route whose path is excluded becomes public (its docs say so and no
   * guard runs first), but its handler still needs its caller, so the headers are checked when it runs (401
   * without a UCAN), as they always were for an excluded route that reads the identity.
   */
  withExclusions(routes: readonly AnyRoute<AuthIdentity>[]): AnyRoute<AuthIdentity>[] {
    return routes.map((route) =>
      route.auth === 'ucan' && this.isPublic(route.path)
        ? {
            ...route,
            auth: 'public',
            handler: async (input) =>
              route.handler({ ...input, identity: await this.#authenticator.authenticate(input.req.headers) }),
          }
        : route,
    );
  }
}
