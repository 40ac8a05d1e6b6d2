// /docs, /docs/* and /docs-json through HTTP on the real server.
import { request } from 'node:http';
import t from 'tap';
import { toOpenApiPath } from '../dist/src/docs/paths.js';
import { startTestServer } from './helpers/server.js';

// One server for the whole file: these routes keep no state.
const server = await startTestServer(t);

/** A GET with the path sent exactly as written (fetch would resolve `..` before sending). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every `$ref` in the document points at something that exists in it. */
function unresolvedRefs(doc: any): string[] {
  const missing: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const target = value
          .replace(/^#\//, '')
          .split('/')
          .reduce<any>((at, part) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
        if (target === undefined) missing.push(value);
      } else visit(value);
    }
  };
  visit(doc);
  return missing;
}

t.test('GET /docs serves Swagger UI configured for /docs-json, its files with their types', async (t) => {
  for (const path of ['/docs', '/docs/']) {
    const page = await fetch(`${server.url}${path}`);
    t.equal(page.status, 200, path);
    t.match(page.headers.get('content-type'), /^text\/html/);
    const html = await page.text();
    t.match(html, /<script src="\/docs\/swagger-ui-bundle\.js"/, 'references the UI bundle by an absolute path');
    t.match(html, /href="\/docs\/swagger-ui\.css"/);
    t.match(html, /url: "\/docs-json"/, "the UI loads this server's document");
    t.notMatch(html, /petstore/);
  }

  const css = await fetch(`${server.url}/docs/swagger-ui.css`);
  t.equal(css.status, 200);
  t.match(css.headers.get('content-type'), /^text\/css/);
  t.match(await css.text(), /\.swagger-ui/);
  const bundle = await fetch(`${server.url}/docs/swagger-ui-bundle.js`);
  t.match(bundle.headers.get('content-type'), /^text\/javascript/);
  t.match(await bundle.text(), /SwaggerUIBundle/);
  const icon = await fetch(`${server.url}/docs/favicon-32x32.png`);
  t.equal(icon.headers.get('content-type'), 'image/png');
  t.same([...new Uint8Array(await icon.arrayBuffer()).slice(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'PNG signature');
  const initializer = await (await fetch(`${server.url}/docs/swagger-initializer.js`)).text();
  t.match(initializer, /"\/docs-json"/, 'the stock initializer (petstore) is replaced');
});

t.test('GET /docs/* serves only files of the UI folder', async (t) => {
  const refused = [
    '/docs/..%2Fpackage.json',
    '/docs/..%2F..%2F..%2Fpackage.json',
    '/docs/%2e%2e%2fswagger-ui-dist%2fpackage.json',
    '/docs/../package.json',
    '/docs/../../package.json',
    '/docs/..%5Cpackage.json',
    '/docs/package.json', // in the folder, but not a UI file
    '/docs/swagger-ui.js.map',
    '/docs/nope.js',
    '/docs/%E0%A4%A',
  ];
  t.equal((await rawGet('/docs/swagger-ui.css')).status, 200, 'the raw client reaches real files');
  for (const path of refused) {
    const res = await rawGet(path);
    t.equal(res.status, 404, path);
    t.notMatch(res.body, /"dependencies"|"name":/, `${path} leaks no file`);
  }
});

t.test('GET /docs-json is an OpenAPI 3.1 document of every route, USSD included', async (t) => {
  const res = await fetch(`${server.url}/docs-json`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  const doc: any = await res.json();
  t.match(doc.openapi, /^3\.1\.\d+$/);
  t.type(doc.info.title, 'string');
  t.type(doc.info.version, 'string');
  t.same(unresolvedRefs(doc), [], 'every $ref resolves');

  // Every route the server mounted is in the document, with its path parameters declared.
  const operationIds = new Set<string>();
  for (const route of server.router.routes) {
    if (route.docs?.hidden) continue;
    const { path, params } = toOpenApiPath(route.pattern);
    const op = doc.paths[path]?.[route.method.toLowerCase()];
    t.ok(op, `${route.method} ${route.pattern} documented as ${path}`);
    if (!op) continue;
    t.notOk(operationIds.has(op.operationId), `${op.operationId} is unique`);
    operationIds.add(op.operationId);
    const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
    t.same(declared.sort(), [...params].sort(), `${path} declares its path parameters`);
    t.notOk(path.includes(':'), `${path} has no colon parameters`);
  }
  for (const path of Object.keys(doc.paths)) t.ok(path.startsWith('/'), path);

  const ussd = doc.paths['/api/ussd'].post;
  const body = ussd.requestBody.content['application/json'].schema;
  t.same(ussd.requestBody.content['application/x-www-form-urlencoded'].schema, body, 'form bodies too');
  t.same(body.required, ['sessionId', 'serviceCode', 'phoneNumber', 'text']);
  t.equal(body.properties.text.maxLength, 182);
  t.equal(body.properties.sessionId.maxLength, 100);
  t.equal(body.properties.serviceCode.pattern, '^\\*\\d+(\\*\\d+)*#$');
  t.equal(body.properties.phoneNumber.pattern, '^\\+[1-9]\\d{6,14}$');
  t.ok(new RegExp(body.properties.text.pattern).test('1*2'), 'the text pattern is a usable regular expression');
  t.notOk(new RegExp(body.properties.text.pattern).test('1\n2'));
  t.ok(ussd.responses['200'].content['text/plain'], 'USSD answers are text/plain');
  t.match(ussd.responses['200'].description, /CON.*END/s);
  t.ok(ussd.responses['429']);
  t.same(ussd.security, [], 'USSD needs no UCAN');

  const debug = doc.paths['/api/ussd/debug/{sessionId}'].get;
  t.same(debug.parameters, [{ name: 'sessionId', in: 'path', required: true, schema: { type: 'string' } }]);
  t.same(debug.security, [{ operatorToken: [] }]);

  const health = doc.paths['/health'].get;
  t.same(health.security, []);
  t.same(health.responses['200'].content['application/json'].schema.required, [
    'status',
    'environment',
    'timestamp',
    'uptime',
    'pid',
    'database',
    'storage',
    'httpEngine',
  ]);
  t.ok(doc.paths['/'].get.responses['200']);
  t.ok(
    doc.paths['/docs'].get && doc.paths['/docs/{path}'].get && doc.paths['/docs-json'].get,
    'the docs routes describe themselves',
  );
  t.ok(doc.components.securitySchemes.bearerAuth && doc.components.securitySchemes.ucanDelegation);

  // Built once: the second answer is the same document.
  t.same(await (await fetch(`${server.url}/docs-json`)).json(), doc);

  // Where the reference runtime serves it too (not a file of the UI under /docs/*).
  const beside = await fetch(`${server.url}/docs/json`);
  t.equal(beside.status, 200);
  t.match(beside.headers.get('content-type'), /^application\/json/);
  t.same(await beside.json(), doc, 'GET /docs/json is the same document');
  t.ok(doc.paths['/docs/json'].get, 'and documents itself');
});
