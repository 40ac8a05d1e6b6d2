// Thread: main
// Faces register their routes here; the front door (src/http/server.ts picks its engine) mounts them once at start-up.
// Patterns use uWS syntax on both engines: `/messages/:sessionId`, `/docs/*`. Static routes win over parameter routes.
import type { Handler } from './types.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Free-form documentation of a route, read by the OpenAPI generator. */
export interface RouteDocs {
  summary?: string;
  tags?: string[];
  [key: string]: unknown;
}

export interface Route {
  readonly method: Method;
  readonly pattern: string;
  readonly paramNames: readonly string[];
  readonly handler: Handler;
  readonly docs?: RouteDocs;
}

export class Router {
  readonly routes: Route[] = [];

  add(method: Method, pattern: string, handler: Handler, docs?: RouteDocs): this {
    const paramNames = pattern
      .split('/')
      .filter((segment) => segment.startsWith(':'))
      .map((segment) => segment.slice(1));
    this.routes.push({ method, pattern, paramNames, handler, docs });
    return this;
  }

  get(pattern: string, handler: Handler, docs?: RouteDocs) {
    return this.add('GET', pattern, handler, docs);
  }
  post(pattern: string, handler: Handler, docs?: RouteDocs) {
    return this.add('POST', pattern, handler, docs);
  }
  put(pattern: string, handler: Handler, docs?: RouteDocs) {
    return this.add('PUT', pattern, handler, docs);
  }
  patch(pattern: string, handler: Handler, docs?: RouteDocs) {
    return this.add('PATCH', pattern, handler, docs);
  }
  delete(pattern: string, handler: Handler, docs?: RouteDocs) {
    return this.add('DELETE', pattern, handler, docs);
  }
}
