// Thread: main
// What a route may say about itself for the OpenAPI document. The schemas are the same valibot schemas
// that validate the requests; the generator only reads them. The shape is checked once, when the document is built.
import * as v from 'valibot';
import type { Route, RouteDocs } from '../http/router.js';
import type { RouteAuth } from '../http/route.js';

export interface ResponseDoc {
  description: string;
  /** Body schema of this answer. */
  schema?: v.GenericSchema;
  /** Default `application/json` when a schema is given. */
  contentType?: string;
}

/** Route docs as the generator reads them. Use `satisfies ApiDocs` where routes are registered. */
export interface ApiDocs extends RouteDocs {
  summary?: string;
  description?: string;
  tags?: string[];
  /** Request body schema. */
  body?: v.GenericSchema;
  /** Media types the body is accepted in (default `application/json`). */
  bodyContentTypes?: string[];
  /** Object schema of the query parameters. */
  query?: v.GenericSchema;
  /** Object schema of the path parameters; parameters of the pattern it leaves out are plain strings. */
  params?: v.GenericSchema;
  /** Status code (or `default`, `4XX`) -> answer. */
  responses?: Record<string, ResponseDoc>;
  /** Who may call it (set by declared routes, see http/route.ts); else the `public` / `operator` flags. */
  auth?: RouteAuth;
  /** No UCAN needed. Routes are UCAN-protected unless they say so. */
  public?: boolean;
  /** Operator route: OPERATOR_TOKEN bearer (or loopback), not UCAN. */
  operator?: boolean;
  /** Left out of the document (a catch-all whose routes a face describes through `openApi()`). */
  hidden?: boolean;
}

const ValibotSchema = v.custom<v.GenericSchema>(
  (input) => typeof input === 'object' && input !== null && (input as { kind?: unknown }).kind === 'schema',
  'must be a valibot schema',
);

const ResponseDocSchema = v.object({
  description: v.string(),
  schema: v.optional(ValibotSchema),
  contentType: v.optional(v.string()),
});

const ApiDocsSchema = v.looseObject({
  summary: v.optional(v.string()),
  description: v.optional(v.string()),
  tags: v.optional(v.array(v.string())),
  body: v.optional(ValibotSchema),
  bodyContentTypes: v.optional(v.pipe(v.array(v.string()), v.minLength(1))),
  query: v.optional(ValibotSchema),
  params: v.optional(ValibotSchema),
  responses: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(/^([1-5](\d\d|XX)|default)$/, 'response keys are status codes')),
      ResponseDocSchema,
    ),
  ),
  auth: v.optional(v.picklist(['public', 'ucan', 'operator', 'api-key'])),
  public: v.optional(v.boolean()),
  operator: v.optional(v.boolean()),
  hidden: v.optional(v.boolean()),
});

/** The route's docs in the generator's shape; a malformed entry is a programming error named with its route. */
export function readApiDocs(route: Route): ApiDocs {
  const parsed = v.safeParse(ApiDocsSchema, route.docs ?? {});
  if (parsed.success) return parsed.output as ApiDocs;
  const problems = parsed.issues.map((issue) => `${v.getDotPath(issue) ?? '(docs)'} ${issue.message}`);
  throw new TypeError(`Route docs of ${route.method} ${route.pattern} are malformed: ${problems.join('; ')}`);
}
