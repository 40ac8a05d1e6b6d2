// Routes are declared once (src/http/route.ts): the OpenAPI document lists exactly the mounted routes, each with
// the security of its declared auth, and the same declaration's schemas validate the requests.
import t from 'tap';
import { authOf } from '../dist/src/docs/openapi.js';
import { toOpenApiPath } from '../dist/src/docs/paths.js';
import { readApiDocs } from '../dist/src/docs/route-docs.js';
import { SECURITY_OF } from '../dist/src/docs/security.js';
import { newUser, startOracleServer } from './helpers/oracle.js';

const server = await startOracleServer(t);
const doc: any = await (await fetch(`${server.url}/docs-json`)).json();
const routes = server.router.routes
  .map((route) => ({ route, docs: readApiDocs(route) }))
  .filter(({ docs }) => !docs.hidden);
const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

t.test('every mounted route is in /docs-json with the security of its auth, and nothing else is', async (t) => {
  const declared = routes
    .filter(({ docs }) => docs.auth !== undefined)
    .map(({ route }) => key(route.method, route.pattern));
  for (const expected of [
    'POST /sessions',
    'GET /sessions',
    'DELETE /sessions/:sessionId',
    'POST /messages/abort',
    'POST /messages/:sessionId',
    'GET /messages/:sessionId',
    'POST /delegation',
    'GET /delegation',
    'DELETE /delegation',
    'GET /user-preferences',
    'POST /api/ussd',
    'GET /api/ussd/sessions',
    'GET /api/ussd/debug/:sessionId',
    'GET /',
    'GET /health',
    'GET /docs',
    'GET /docs/*',
    'GET /docs-json',
  ]) {
    t.ok(declared.includes(expected), `${expected} is declared`);
  }
  const mounted = new Set<string>();
  for (const { route, docs } of routes) {
    const path = toOpenApiPath(route.pattern).path;
    mounted.add(key(route.method, path));
    const operation = doc.paths[path]?.[route.method.toLowerCase()];
    if (!t.ok(operation, `${route.method} ${route.pattern} is documented`)) continue;
    t.same(
      operation.security,
      SECURITY_OF[authOf(docs)],
      `${route.method} ${route.pattern}: security of auth '${authOf(docs)}'`,
    );
    if (authOf(docs) === 'ucan') t.ok(operation.responses['401'], `${route.method} ${route.pattern} documents its 401`);
  }
  const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item as object).map((method) => key(method, path)),
  );
  // The gateway's operations come from its descriptors (its face's openApi()), served by one hidden catch-all.
  const described = new Set(server.faces.flatMap((face) => Object.keys(face.openApi?.()?.paths ?? {})));
  t.ok(described.size > 0, 'the gateway describes its own operations');
  for (const path of described)
    t.same(doc.paths[path].get.security, [], `GET ${path}: public without GATEWAY_API_KEYS`);
  const strays = documented.filter(
    (operation) => !mounted.has(operation) && !described.has(operation.slice(operation.indexOf(' ') + 1)),
  );
  t.same(strays, [], 'no documented operation without a mounted route');
});

t.test("the declared schemas validate: guard first, then input, in each face's own format", async (t) => {
  const anonymous = await fetch(`${server.url}/sessions?limit=-1`);
  t.equal(anonymous.status, 401, 'the guard runs before validation');
  const user = await newUser(server.oracleDid);
  const badQuery = await fetch(`${server.url}/sessions?limit=-1`, { headers: user.headers() });
  t.equal(badQuery.status, 400);
  t.match(await badQuery.json(), { statusCode: 400, message: [/limit/] });
  const badBody = await fetch(`${server.url}/delegation`, {
    method: 'POST',
    headers: { ...user.headers(), 'content-type': 'application/json' },
    body: '{"raw":',
  });
  t.equal(badBody.status, 400, 'an unparsable body is a 400 of the oracle');
  const ussd = await fetch(`${server.url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(ussd.status, 200, 'USSD answers bad input with an END screen');
  t.match(await ussd.text(), /^END /);
});

t.test('a gated gateway documents its operations as needing an API key', async (t) => {
  const gated = await startOracleServer(t, { env: { GATEWAY_API_KEYS: 'k1' } });
  const gatedDoc: any = await (await fetch(`${gated.url}/docs-json`)).json();
  const [path] = gated.faces.flatMap((face) => Object.keys(face.openApi?.()?.paths ?? {}));
  t.same(gatedDoc.paths[path].get.security, SECURITY_OF['api-key']);
  t.match(gatedDoc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'x-api-key' });
});
