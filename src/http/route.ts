// Thread: main
// A route declared once: method, path, input schemas, auth, answers and handler. `mountRoute` builds from it the
// validating, guarded handler and the route's OpenAPI docs, so the document and the checks cannot drift apart.
import * as v from 'valibot';
import type { ApiDocs, ResponseDoc } from '../docs/route-docs.js';
import { HttpError } from './errors.js';
import type { Method, Router } from './router.js';
import type { Handler, HttpRequest, HttpResponse, Reply } from './types.js';
import { BoundedMap } from '../base/bounded-map.js';

/** Who may call a route: anyone, a UCAN-authenticated user, the operator, or an API-key holder. */
export type RouteAuth = 'public' | 'ucan' | 'operator' | 'api-key';

type Out<S> = S extends v.GenericSchema ? v.InferOutput<S> : undefined;

/** What a handler gets: validated input, the caller's identity (undefined on public routes), and the raw request. */
export interface RouteInput<P, Q, B, I> {
  readonly params: Out<P>;
  readonly query: Out<Q>;
  readonly body: Out<B>;
  readonly identity: I;
  readonly req: HttpRequest;
  readonly res: HttpResponse;
}

export interface RouteDeclaration<P = undefined, Q = undefined, B = undefined, I = unknown> {
  readonly method: Method;
  /** uWS pattern: `/messages/:sessionId`. */
  readonly path: string;
  readonly auth: RouteAuth;
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: string[];
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  /** Media types the body is accepted in (default `application/json`). */
  readonly bodyContentTypes?: string[];
  /**
   * A hand-written check of a hot route's body: the schema's exact output when the body is plainly valid, else
   * undefined, and the schema decides (and words the issues). Only for routes where the schema's cost shows.
   */
  readonly bodyFastPath?: (input: unknown) => Out<B> | undefined;
  /** Status code -> answer. */
  readonly responses?: Record<string, ResponseDoc>;
  readonly handler: (input: RouteInput<P, Q, B, I>) => Reply | void | Promise<Reply | void>;
}

/** A route of any input schemas, in a face's list of routes: each was type-checked when it was declared. */
// biome-ignore lint/suspicious/noExplicitAny: a list holds routes of different schemas; `unknown` would reject their handlers
export type AnyRoute<I = unknown> = RouteDeclaration<any, any, any, I>;

/** How a face checks its callers and answers bad input, given once when its routes are mounted. */
export interface RouteContext<I> {
  /** Per kind of auth its routes use: the caller's identity, or throws the face's 401/403. */
  guards: Partial<Record<Exclude<RouteAuth, 'public'>, (req: HttpRequest) => I | Promise<I>>>;
  /** The answer to input that fails its schema, or to a body that could not be parsed: throws the face's 400 or returns its own answer. */
  invalid(problem: InputProblem, req: HttpRequest): Reply;
}

export type InputProblem =
  | { issues: readonly v.BaseIssue<unknown>[]; bodyError?: undefined }
  | { issues?: undefined; bodyError: string };

/** A context for routes with no face-specific error format: bad input is a plain 400 listing the problems. */
export function plainContext<I>(guards: RouteContext<I>['guards'] = {}): RouteContext<I> {
  return {
    guards,
    invalid(problem) {
      throw HttpError.of(
        400,
        problem.bodyError === undefined ? problem.issues.map((issue) => issue.message) : [problem.bodyError],
      );
    },
  };
}

/**
 * The declarer of a face's routes whose callers are identified as `I`: it types each declaration (the handler's
 * input follows its schemas) and returns it unchanged. `const route = declarer<AuthIdentity>(); route({ ... })`.
 */
export function declarer<I>() {
  return <
    P extends v.GenericSchema | undefined = undefined,
    Q extends v.GenericSchema | undefined = undefined,
    B extends v.GenericSchema | undefined = undefined,
  >(
    route: RouteDeclaration<P, Q, B, I>,
  ): RouteDeclaration<P, Q, B, I> => route;
}

/** The docs the OpenAPI generator reads, all taken from the declaration. */
export function docsOf(route: RouteDeclaration<unknown, unknown, unknown, never>): ApiDocs {
  const docs: ApiDocs = { auth: route.auth };
  if (route.summary) docs.summary = route.summary;
  if (route.description) docs.description = route.description;
  if (route.tags) docs.tags = route.tags;
  if (route.params) docs.params = route.params as v.GenericSchema;
  if (route.query) docs.query = route.query as v.GenericSchema;
  if (route.body) docs.body = route.body as v.GenericSchema;
  if (route.bodyContentTypes) docs.bodyContentTypes = route.bodyContentTypes;
  if (route.responses) docs.responses = route.responses;
  return docs;
}

/**
 * Adds the routes to `router`. Each request is checked in the order clients have always seen: the caller first
 * (401 before any 400), then path parameters, query and body; only then does the handler run. A route whose auth
 * the face has no guard for is a programming error, refused at mount time.
 */
export function mountRoutes<I>(router: Router, context: RouteContext<I>, routes: readonly AnyRoute<I>[]): void {
  for (const route of routes) {
    const guard = route.auth === 'public' ? undefined : context.guards[route.auth];
    if (route.auth !== 'public' && !guard)
      throw new TypeError(`${route.method} ${route.path}: no guard for auth '${route.auth}'`);
    const validQuery = route.query ? queryChecker(route.query as v.GenericSchema) : undefined;
    const checked = (req: HttpRequest, res: HttpResponse, identity: I): ReturnType<Handler> => {
      const params = check(route.params, req.params);
      if (params && !params.success) return context.invalid({ issues: params.issues }, req);
      const query = validQuery?.(req);
      if (query && !query.success) return context.invalid({ issues: query.issues }, req);
      if (route.body && req.bodyError) return context.invalid({ bodyError: req.bodyError }, req);
      const quick = route.bodyFastPath?.(req.body);
      const body = quick === undefined ? check(route.body, req.body) : undefined;
      if (body && !body.success) return context.invalid({ issues: body.issues }, req);
      return route.handler({
        params: params?.output,
        query: query?.output,
        body: quick ?? body?.output,
        identity,
        req,
        res,
      });
    };
    // A public route runs its checks at once (no promise and no turn of the microtask queue for a missing guard).
    const handler: Handler = guard
      ? async (req, res) => checked(req, res, (await guard(req)) as I)
      : (req, res) => checked(req, res, undefined as I);
    router.add(route.method, route.path, handler, docsOf(route));
  }
}

/** Query strings whose valid output is kept, per route. */
const QUERIES_KEPT = 64;

/**
 * A route's query check that keeps the output of the last valid query strings (clients repeat theirs, e.g.
 * `?limit=20`): a kept one skips URLSearchParams and the schema. Query schemas are pure (the same string
 * always gives the same output); a kept output is frozen (query outputs are flat), so no handler can change it
 * for the next request.
 */
function queryChecker(schema: v.GenericSchema): (req: HttpRequest) => v.SafeParseResult<v.GenericSchema> {
  const kept = new BoundedMap<string, v.SafeParseResult<v.GenericSchema>>(QUERIES_KEPT);
  return (req) => {
    const known = kept.get(req.rawQuery);
    if (known) return known;
    const result = v.safeParse(schema, Object.fromEntries(req.query));
    if (result.success) {
      Object.freeze(result.output);
      kept.set(req.rawQuery, Object.freeze(result));
    }
    return result;
  };
}

function check(schema: unknown, input: unknown) {
  return schema ? v.safeParse(schema as v.GenericSchema, input) : undefined;
}
