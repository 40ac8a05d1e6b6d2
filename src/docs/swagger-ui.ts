// Thread: main
// The Swagger UI files of `swagger-ui-dist`, read into memory once. Only names found in that folder are ever
// served, so a request path can never reach another file.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';

export interface Asset {
  contentType: string;
  body: Buffer;
}

// `absolute-path.js` is the package's `absolutePath()`; requiring the package index would also load the
// 1.7 MB browser bundle into Node.
const absolutePath = createRequire(import.meta.url)('swagger-ui-dist/absolute-path.js') as () => string;

/** Source maps (7 MB) and the package's own metadata are not served. */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.png': 'image/png',
};

export const DOCS_PREFIX = '/docs/';

/** Asset name -> file; `index.html` and `swagger-initializer.js` point the UI at `documentUrl`. */
export function loadSwaggerUiAssets(title: string, documentUrl: string): Map<string, Asset> {
  const folder = absolutePath();
  const assets = new Map<string, Asset>();
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES[extname(entry.name)];
    if (entry.isFile() && contentType)
      assets.set(entry.name, { contentType, body: readFileSync(join(folder, entry.name)) });
  }
  const initializer = initializerScript(documentUrl);
  assets.set('swagger-initializer.js', { contentType: CONTENT_TYPES['.js'], body: Buffer.from(initializer) });
  assets.set('index.html', { contentType: CONTENT_TYPES['.html'], body: Buffer.from(indexPage(title, initializer)) });
  return assets;
}

function initializerScript(documentUrl: string): string {
  return `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(documentUrl)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
  });
};
`;
}

/** Absolute asset URLs: the page is served at `/docs`, where the stock page's `./x` would miss the folder. */
function indexPage(title: string, initializer: string): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" type="text/css" href="${DOCS_PREFIX}swagger-ui.css">
    <link rel="stylesheet" type="text/css" href="${DOCS_PREFIX}index.css">
    <link rel="icon" type="image/png" href="${DOCS_PREFIX}favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${DOCS_PREFIX}favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PREFIX}swagger-ui-bundle.js" charset="UTF-8"></script>
    <script src="${DOCS_PREFIX}swagger-ui-standalone-preset.js" charset="UTF-8"></script>
    <script>
${initializer}    </script>
  </body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
