// GET /docs (Swagger UI), GET /docs/* (its files) and GET /docs-json (the OpenAPI document). Register these
// after every face registered its routes; the document is built on its first request, when all are known.
import type { Face } from '../face.js';
import { HttpError } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { reply, type HttpRequest } from '../http/types.js';
import { buildOpenApiDocument, type OpenApiInfo } from './openapi.js';
import type { ApiDocs } from './route-docs.js';
import { DOCS_PREFIX, loadSwaggerUiAssets } from './swagger-ui.js';

export { buildOpenApiDocument, type OpenApiInfo, type OpenApiDocument } from './openapi.js';
export type { ApiDocs, ResponseDoc } from './route-docs.js';
export { HttpErrorBodySchema, TOO_MANY_REQUESTS } from './schemas.js';

export const DOCUMENT_URL = '/docs-json';

export interface DocsOptions {
  faces: readonly Pick<Face, 'name' | 'openApi'>[];
  info: OpenApiInfo;
}

const ASSET_CACHE = 'public, max-age=3600';

export function registerDocsRoutes(router: Router, { faces, info }: DocsOptions): void {
  const assets = loadSwaggerUiAssets(info.title, DOCUMENT_URL);
  const page = assets.get('index.html')!;
  let documentJson: string | undefined;

  const docsDocs = (summary: string, responses: ApiDocs['responses']): ApiDocs => ({ summary, tags: ['docs'], public: true, responses });

  router.get(
    '/docs',
    function docsPage() {
      return reply.raw(200, page.contentType, page.body);
    },
    docsDocs('Interactive API documentation (Swagger UI)', { 200: { description: 'The Swagger UI page', contentType: 'text/html' } }),
  );
  router.get(
    '/docs/*',
    function docsAsset(req: HttpRequest) {
      const name = assetName(req.path, DOCS_PREFIX);
      const asset = name === '' ? page : name === undefined ? undefined : assets.get(name);
      if (!asset) throw HttpError.of(404, `Cannot GET ${req.path}`);
      return reply.raw(200, asset.contentType, asset.body, { 'Cache-Control': ASSET_CACHE });
    },
    docsDocs('Static files of the Swagger UI', {
      200: { description: 'The file, with its content type' },
      404: { description: 'No such file of the UI' },
    }),
  );
  router.get(
    DOCUMENT_URL,
    function openApiDocument() {
      documentJson ??= JSON.stringify(buildOpenApiDocument({ routes: router.routes, faces, info }));
      return reply.raw(200, 'application/json; charset=utf-8', documentJson);
    },
    docsDocs('This OpenAPI 3.1 document', { 200: { description: 'OpenAPI 3.1 document of every route of this server' } }),
  );
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
