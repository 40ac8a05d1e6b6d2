// Thread: main
// GET /playground (the page) and GET /playground/* (its bundled files, plus config.json: the oracle DID the
// page's UCANs are addressed to). The files are built by scripts/build-playground.mjs into dist/playground and
// read into memory once; only names found in that folder are ever served, so a path cannot reach another file.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assetName } from '../docs/index.js';
import type { Asset } from '../docs/swagger-ui.js';
import { HttpError } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { declarer, mountRoutes, plainContext } from '../http/route.js';
import { reply } from '../http/types.js';
import type { Logger } from '../base/log.js';

export { playgroundEnabled, playgroundEnv } from './config.js';

const PLAYGROUND_PATH = '/playground';
const PREFIX = `${PLAYGROUND_PATH}/`;
/** dist/src/playground/ -> dist/playground/ */
const BUNDLE_DIR = fileURLToPath(new URL('../../playground/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

// Everything the page loads or connects to is this server ('self' covers the same-origin WebSocket too).
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; frame-ancestors 'none'",
  'Cache-Control': 'no-cache',
};

export interface PlaygroundOptions {
  oracle: { did: string; name: string };
  log: Logger;
  /** Where the built files are; default dist/playground. */
  bundleDir?: string;
}

function loadAssets(folder: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(folder)) return assets;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const contentType = CONTENT_TYPES[extname(entry.name)];
    if (entry.isFile() && contentType)
      assets.set(entry.name, { contentType, body: readFileSync(join(folder, entry.name)) });
  }
  return assets;
}

export function registerPlaygroundRoutes(
  router: Router,
  { oracle, log, bundleDir = BUNDLE_DIR }: PlaygroundOptions,
): void {
  const assets = loadAssets(bundleDir);
  const page = assets.get('index.html');
  if (!page) log.warn({ bundleDir }, 'playground enabled but not built (npm run build): /playground answers 503');
  const config = Buffer.from(JSON.stringify({ oracleDid: oracle.did, oracleName: oracle.name }));
  assets.set('config.json', { contentType: 'application/json; charset=utf-8', body: config });

  const notBuilt = () => HttpError.of(503, 'The playground is not built: run npm run build');
  const route = declarer<void>();
  const tags = ['playground'];

  mountRoutes(router, plainContext<void>(), [
    route({
      method: 'GET',
      path: PLAYGROUND_PATH,
      auth: 'public',
      summary: 'Browser playground: USSD phone, oracle chat client and live dashboard',
      tags,
      responses: {
        200: { description: 'The page', contentType: 'text/html' },
        503: { description: 'The page was not built' },
      },
      handler() {
        if (!page) throw notBuilt();
        return reply.raw(200, page.contentType, page.body, PAGE_HEADERS);
      },
    }),
    route({
      method: 'GET',
      path: `${PREFIX}*`,
      auth: 'public',
      summary: 'Files of the playground page; config.json names the oracle DID its UCANs are addressed to',
      tags,
      responses: {
        200: { description: 'The file, with its content type' },
        404: { description: 'No such file of the page' },
      },
      handler({ req }) {
        const name = assetName(req.path, PREFIX);
        if (name === '' && !page) throw notBuilt();
        const asset = name === '' ? page : name === undefined ? undefined : assets.get(name);
        if (!asset) throw HttpError.of(404, `Cannot GET ${req.path}`);
        return reply.raw(
          200,
          asset.contentType,
          asset.body,
          name === '' ? PAGE_HEADERS : { 'Cache-Control': 'no-cache' },
        );
      },
    }),
  ]);
}
