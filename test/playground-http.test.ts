// GET /playground and its files through HTTP: served outside production, 404 when disabled or in production
// by default, only the bundle's own files, the oracle DID in config.json.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../dist/src/app/config.js';
import { HttpError } from '../dist/src/http/errors.js';
import { Router } from '../dist/src/http/router.js';
import { createLogger } from '../dist/src/base/log.js';
import type { OracleFace } from '../dist/src/oracle/index.js';
import { playgroundEnabled, registerPlaygroundRoutes } from '../dist/src/playground/index.js';
import { startTestServer } from './helpers/server.js';

const PRODUCTION = { NODE_ENV: 'production', PIN_ENCRYPTION_KEY: 'a'.repeat(64) };

/** A GET with the path sent exactly as written (fetch would resolve `..` before sending). */
function rawGet(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

// One server with the defaults for the routes' own behaviour (they keep no state).
const server = await startTestServer(t);

t.test('served by default outside production: the page, its bundle, its styles and the oracle DID', async (t) => {
  const page = await fetch(`${server.url}/playground`);
  t.equal(page.status, 200);
  t.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
  t.match(page.headers.get('content-security-policy'), /default-src 'self'/, 'the page loads nothing from elsewhere');
  const html = await page.text();
  for (const id of [
    'ussd-phone',
    'ussd-code',
    'ussd-dial',
    'ussd-screen',
    'ussd-input',
    'ussd-send',
    'chat-connect',
    'chat-input',
    'chat-send',
    'chat-transcript',
    'chat-events',
    'dashboard',
  ]) {
    t.match(html, `data-testid="${id}"`, id);
  }
  t.notMatch(html, /https?:\/\/(?!127\.0\.0\.1)/, 'no address of another host in the page');
  t.equal((await fetch(`${server.url}/playground/`)).status, 200, 'with a trailing slash too');

  const script = await fetch(`${server.url}/playground/playground.js`);
  t.equal(script.status, 200);
  t.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.ok((await script.text()).length > 10_000, 'the bundle with the UCAN libraries inside');
  const styles = await fetch(`${server.url}/playground/playground.css`);
  t.equal(styles.headers.get('content-type'), 'text/css; charset=utf-8');
  t.match(await styles.text(), /\.uplot/, "uPlot's styles are bundled");

  const oracle = server.faces.find((face) => face.name === 'oracle') as OracleFace;
  const config = await fetch(`${server.url}/playground/config.json`);
  t.same(await config.json(), { oracleDid: oracle.identity.did, oracleName: oracle.identity.name });
});

t.test('only plain names of the bundle folder are served', async (t) => {
  for (const path of [
    '/playground/missing.js',
    '/playground/..%2fpackage.json',
    '/playground/..%5cpackage.json',
    '/playground/%E0%A4%A',
    '/playground/a/b.js',
  ]) {
    const res = await fetch(`${server.url}${path}`);
    t.equal(res.status, 404, path);
    t.match(await res.json(), { statusCode: 404, error: 'Not Found' });
  }
  t.equal(await rawGet(server.port, '/playground/../package.json'), 404, 'a raw .. segment');
  t.equal(await rawGet(server.port, '/playground/../../dist/src/app/main.js'), 404);
});

t.test('PLAYGROUND_ENABLED=false, and production without it, answer 404', async (t) => {
  for (const env of [{ PLAYGROUND_ENABLED: 'false' }, PRODUCTION]) {
    const other = await startTestServer(t, { env });
    t.equal((await fetch(`${other.url}/playground`)).status, 404, JSON.stringify(env));
    t.equal((await fetch(`${other.url}/playground/config.json`)).status, 404);
    await other.shutdown();
  }
});

t.test('PLAYGROUND_ENABLED overrides NODE_ENV both ways; a bad value stops start-up with its name', async (t) => {
  t.equal(playgroundEnabled(loadConfig({ ...PRODUCTION, PLAYGROUND_ENABLED: 'true' })), true);
  t.equal(playgroundEnabled(loadConfig({ PLAYGROUND_ENABLED: 'no' })), false);
  t.equal(playgroundEnabled(loadConfig({ NODE_ENV: 'staging' })), true);
  t.throws(() => loadConfig({ PLAYGROUND_ENABLED: 'maybe' }), /PLAYGROUND_ENABLED="maybe": must be true or false/);
  t.equal(loadConfig({}).PLAYGROUND_ENABLED, undefined, 'unset follows NODE_ENV');
});

t.test('a server built without the bundle answers 503 with what to do', async (t) => {
  const empty = mkdtempSync(join(tmpdir(), 'playground-empty-'));
  t.teardown(() => rmSync(empty, { recursive: true, force: true }));
  const router = new Router();
  registerPlaygroundRoutes(router, {
    oracle: { did: 'did:key:z6Mk', name: 'oracle' },
    log: createLogger('silent'),
    bundleDir: empty,
  });
  const page = router.routes.find((route) => route.pattern === '/playground')!;
  try {
    await page.handler({ path: '/playground' } as never, {} as never);
    t.fail('should refuse');
  } catch (error) {
    t.ok(error instanceof HttpError);
    t.match((error as HttpError).body, { statusCode: 503, message: /npm run build/ });
  }
});
