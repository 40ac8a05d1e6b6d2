// Thread: main
// GET /docs (Swagger UI), GET /docs/* (its files), GET /docs-json and GET /docs/json (the OpenAPI document, the
// second where the reference runtime serves it). Register these
// after every face registered its routes; the document is built on its first request, when all are known.
import type { Face } from '../app/face.js';
import { HttpError } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { declarer, mountRoutes, plainContext } from '../http/route.js';
import { reply } from '../http/types.js';
import { buildOpenApiDocument, type OpenApiInfo } from './openapi.js';
import { DOCS_PREFIX, loadSwaggerUiAssets } from './swagger-ui.js';

export { buildOpenApiDocument, type OpenApiInfo, type OpenApiDocument } from './openapi.js';
export type { ApiDocs, ResponseDoc } from './route-docs.js';
export { HttpErrorBodySchema, TOO_MANY_REQUESTS } from './schemas.js';

export const DOCUMENT_URL = '/docs-json';
/** Where the reference runtime serves the same document. */
export const REFERENCE_DOCUMENT_URL = '/docs/json';

export interface DocsOptions {
  faces: readonly Pick<Face, 'name' | 'openApi'>[];
  info: OpenApiInfo;
}

const ASSET_CACHE = 'public, max-age=3600';

const route = declarer<void>();

export function registerDocsRoutes(router: Router, { faces, info }: DocsOptions): void {
  const assets = loadSwaggerUiAssets(info.title, DOCUMENT_URL);
  const page = assets.get('index.html')!;
  let documentJson: string | undefined;
  const tags = ['docs'];
  mountRoutes(router, plainContext<void>(), [
    route({
      method: 'GET',
      path: '/docs',
      auth: 'public',
      summary: 'Interactive API documentation (Swagger UI)',
      tags,
      responses: { 200: { description: 'The Swagger UI page', contentType: 'text/html' } },
      handler: () => reply.raw(200, page.contentType, page.body),
    }),
    route({
      method: 'GET',
      path: '/docs/*',
      auth: 'public',
      summary: 'Static files of the Swagger UI',
      tags,
      responses: {
        200: { description: 'The file, with its content type' },
        404: { description: 'No such file of the UI' },
      },
      handler({ req }) {
        const name = assetName(req.path, DOCS_PREFIX);
        const asset = name === '' ? page : name === undefined ? undefined : assets.get(name);
        if (!asset) throw HttpError.of(404, `Cannot GET ${req.path}`);
        return reply.raw(200, asset.contentType, asset.body, { 'Cache-Control': ASSET_CACHE });
      },
    }),
    ...[DOCUMENT_URL, REFERENCE_DOCUMENT_URL].map((path) =>
      route({
        method: 'GET',
        path,
        auth: 'public',
        summary:
          path === DOCUMENT_URL
            ? 'This OpenAPI 3.1 document'
            : 'This OpenAPI 3.1 document (where the reference serves it)',
        tags,
        responses: { 200: { description: 'OpenAPI 3.1 document of every route of this server' } },
        handler() {
          documentJson ??= JSON.stringify(buildOpenApiDocument({ routes: router.routes, faces, info }));
          return reply.raw(200, 'application/json; charset=utf-8', documentJson);
        },
      }),
    ),
  ]);
}

/** The file name under `prefix` (e.g. /docs/); undefined when it cannot be a plain name of the folder. */
export function assetName(path: string, prefix: string): string | undefined {
  try {
    const name = decodeURIComponent(path.slice(prefix.length));
    return name.includes('/') || name.includes('\\') ? undefined : name;
  } catch {
    return undefined;
  }
}
