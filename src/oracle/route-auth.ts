// UCAN authentication of the oracle plugins' HTTP routes (the face's own routes are declared, see
// http/route.ts, and get the identity as an argument), decided once per route at registration: plugins register
// through a GuardedRouter, which authenticates every request of a protected route
// before its handler runs (401 on failure). Public: routes named by plugins (`getAuthExcludedRoutes()`) or by
// AUTH_EXCLUDED_ROUTES. Entries are uWS-style patterns or paths: `/webhooks/*`, `/hooks/:id`, `/docs/(.*)`.
import { Router, type Method, type RouteDocs } from '../http/router.js';
import type { Handler, HttpRequest } from '../http/types.js';
import { type AuthIdentity, type UcanAuthenticator } from './auth/index.js';

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
  readonly #identities = new WeakMap<HttpRequest, AuthIdentity>();

  constructor(authenticator: UcanAuthenticator, excludedRoutes: readonly string[]) {
    this.#authenticator = authenticator;
    this.#excluded = excludedRoutes.filter((entry) => entry.trim()).map(exclusionMatcher);
  }

  /** Whether a path (or a route pattern, read as a path) is public. */
  isPublic(path: string): boolean {
    return this.#excluded.some((matcher) => matcher.test(path));
  }

  /** The handler of a route, authenticated first unless the route is public. */
  guard(pattern: string, handler: Handler): Handler {
    if (this.isPublic(pattern)) return handler;
    // A concrete path may be excluded although its pattern is not (`/hooks/github` under `/hooks/:name`).
    const checkPath = this.#excluded.length > 0;
    return async (req, res) => {
      if (!(checkPath && this.isPublic(req.path))) this.#identities.set(req, await this.#authenticator.authenticate(req.headers));
      return handler(req, res);
    };
  }

  /** The authenticated user of a request; on a public route the headers are checked now (401 when absent). */
  async identity(req: HttpRequest): Promise<AuthIdentity> {
    return this.#identities.get(req) ?? this.#authenticator.authenticate(req.headers);
  }
}

/** A Router whose routes land on `target`, each guarded by `auth`; public ones say so in their docs. */
export class GuardedRouter extends Router {
  constructor(
    private readonly target: Router,
    private readonly auth: OracleRouteAuth,
  ) {
    super();
  }

  override add(method: Method, pattern: string, handler: Handler, docs?: RouteDocs): this {
    const isPublic = this.auth.isPublic(pattern);
    this.target.add(method, pattern, this.auth.guard(pattern, handler), isPublic ? { ...docs, public: true } : docs);
    return this;
  }
}
