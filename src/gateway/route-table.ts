// Thread: main
// The route table, generated from the `google.api.http` GET templates of the schema's methods (plus the
// legacy aliases when asked). Routes are tried in declaration order; the first match wins.
import type { Logger } from '../base/log.js';
import type { GatewaySchema, QueryMethod } from './descriptors.js';
import { LEGACY_ALIASES } from './legacy-routes.js';
import { matchSegments, parseTemplate, splitPath, type PathTemplate } from './path-template.js';
import { RequestMapper } from './request-mapper.js';

export interface GatewayRoute {
  readonly template: PathTemplate;
  readonly method: QueryMethod;
  readonly mapper: RequestMapper;
  readonly legacy: boolean;
}

export interface RouteMatch {
  readonly route: GatewayRoute;
  readonly bound: ReadonlyMap<string, string>;
}

const NOTHING_BOUND: ReadonlyMap<string, string> = new Map();

export class RouteTable {
  /** Routes per first path segment (each list in declaration order, templates starting with a variable included). */
  readonly #byFirstSegment = new Map<string, GatewayRoute[]>();
  readonly #startingWithVariable: GatewayRoute[] = [];
  /** Request path -> match, for templates of literals only that no earlier template shadows: one lookup per request. */
  readonly #exact = new Map<string, RouteMatch>();

  constructor(readonly routes: readonly GatewayRoute[]) {
    for (const [index, route] of routes.entries()) {
      const { segments, verb, source } = route.template;
      // A `%` in a literal would be compared decoded by the segment matcher: such templates keep that path.
      if (verb !== undefined || source.includes('%') || !segments.every((segment) => segment.kind === 'literal'))
        continue;
      const parts = splitPath(source)!;
      if (!routes.slice(0, index).some((earlier) => matchSegments(earlier.template, parts)))
        this.#exact.set(source, { route, bound: NOTHING_BOUND });
    }
    for (const route of routes) {
      const first = route.template.segments[0];
      if (first?.kind !== 'literal') {
        this.#startingWithVariable.push(route);
        for (const list of this.#byFirstSegment.values()) list.push(route);
      } else {
        let list = this.#byFirstSegment.get(first.value);
        if (!list) this.#byFirstSegment.set(first.value, (list = [...this.#startingWithVariable]));
        list.push(route);
      }
    }
  }

  /** Literal first segments of the templates ('' when some template starts with a variable). */
  get firstSegments(): string[] {
    return [...this.#byFirstSegment.keys(), ...(this.#startingWithVariable.length ? [''] : [])];
  }

  match(path: string): RouteMatch | undefined {
    const exact = this.#exact.get(path);
    if (exact) return exact;
    const parts = splitPath(path);
    if (!parts) return undefined;
    for (const route of this.#byFirstSegment.get(parts[0]) ?? this.#startingWithVariable) {
      const bound = matchSegments(route.template, parts);
      if (bound) return { route, bound };
    }
    return undefined;
  }

  /** Builds the table; templates that do not fit their request type are logged and left out. */
  static build(schema: GatewaySchema, options: { legacy: boolean; log?: Logger }): RouteTable {
    const routes: GatewayRoute[] = [];
    const add = (method: QueryMethod, pattern: string, legacy: boolean) => {
      try {
        const template = parseTemplate(pattern);
        const mapper = new RequestMapper(
          method.requestType,
          template.variables.map((variable) => variable.fieldPath),
        );
        routes.push({ template, method, mapper, legacy });
      } catch (error) {
        options.log?.warn(
          { method: method.grpcPath, pattern, err: (error as Error).message },
          'gateway route left out',
        );
      }
    };
    for (const method of schema.methods) for (const pattern of method.patterns) add(method, pattern, false);
    if (options.legacy) {
      const byPath = new Map(schema.methods.map((method) => [method.grpcPath, method]));
      for (const alias of LEGACY_ALIASES) {
        const method = byPath.get(alias.grpcPath);
        if (method) add(method, alias.pattern, true);
      }
    }
    return new RouteTable(routes);
  }
}
