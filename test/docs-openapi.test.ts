// The OpenAPI generator on its own: a Router with fully described routes and a face with its own openApi().
import t from 'tap';
import * as v from 'valibot';
import { Router } from '../dist/src/http/router.js';
import { reply } from '../dist/src/http/types.js';
import { buildOpenApiDocument } from '../dist/src/docs/index.js';
import { operationIdOf, toOpenApiPath } from '../dist/src/docs/paths.js';

const ok = () => reply.json(200, {});
const info = { title: 'Test API', version: '9.9.9' };

interface Tree {
  name: string;
  children: Tree[];
}
const TreeSchema: v.GenericSchema<Tree> = v.object({ name: v.string(), children: v.lazy(() => v.array(TreeSchema)) });

function describedRouter(): Router {
  const router = new Router();
  router.post('/things/:thingId/parts/:partId', ok, {
    summary: 'Add a part',
    tags: ['things'],
    body: v.object({
      name: v.pipe(v.string(), v.minLength(1), v.maxLength(40)),
      count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
      // A transform has no JSON Schema form: it must be left out, not fail the document.
      slug: v.pipe(
        v.string(),
        v.transform((s) => s.toLowerCase()),
      ),
      tree: TreeSchema,
    }),
    query: v.object({
      limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.maxValue(100))),
      verbose: v.picklist(['yes', 'no']),
    }),
    params: v.object({ thingId: v.pipe(v.string(), v.uuid()) }),
    responses: {
      201: { description: 'Created', schema: v.object({ id: v.string() }) },
      400: { description: 'Bad body' },
      409: { description: 'Conflict as text', contentType: 'text/plain', schema: v.string() },
    },
  });
  router.get('/open', ok, { summary: 'Public', public: true });
  router.get('/ops/:id', ok, { operator: true });
  router.get('/catch/*', ok, { public: true });
  router.get('/described-by-face/*', ok, { hidden: true });
  router.delete('/bare/:x', ok);
  return router;
}

const face = {
  name: 'gateway',
  openApi: () => ({
    paths: {
      '/chain/entity/{id}': {
        get: {
          operationId: 'entity',
          security: [],
          responses: {
            200: {
              description: 'x',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Entity' } } },
            },
          },
        },
      },
      '/open': { post: { operationId: 'faceOpenPost', responses: { 200: { description: 'face' } } } },
    },
    schemas: { Entity: { type: 'object', properties: { id: { type: 'string' } } } },
  }),
};

t.test('paths and operation ids from uWS patterns', async (t) => {
  t.same(toOpenApiPath('/messages/:sessionId'), {
    path: '/messages/{sessionId}',
    params: ['sessionId'],
    wildcard: undefined,
  });
  t.same(toOpenApiPath('/docs/*'), { path: '/docs/{path}', params: ['path'], wildcard: 'path' });
  t.equal(toOpenApiPath('/').path, '/');
  t.equal(operationIdOf('POST', '/messages/:sessionId'), 'postMessagesBySessionId');
  t.equal(operationIdOf('GET', '/'), 'getRoot');
  t.equal(operationIdOf('GET', '/user-preferences'), 'getUserPreferences');
});

t.test('a fully described route becomes a full operation', async (t) => {
  const doc = buildOpenApiDocument({ routes: describedRouter().routes, faces: [face], info });
  t.equal(doc.openapi, '3.1.0');
  t.same(doc.info, info);
  const op = doc.paths['/things/{thingId}/parts/{partId}'].post as any;
  t.ok(op, 'colon parameters become braces');
  t.equal(op.operationId, 'postThingsByThingIdPartsByPartId');
  t.equal(op.summary, 'Add a part');
  t.same(op.tags, ['things']);

  const params = Object.fromEntries(op.parameters.map((p: any) => [`${p.in}:${p.name}`, p]));
  t.same(params['path:thingId'], {
    name: 'thingId',
    in: 'path',
    required: true,
    schema: { type: 'string', format: 'uuid' },
  });
  t.same(
    params['path:partId'],
    { name: 'partId', in: 'path', required: true, schema: { type: 'string' } },
    'a parameter the schema leaves out is a string',
  );
  // Query parameters are documented as sent: a string, before the transform to a number.
  t.same(params['query:limit'], {
    name: 'limit',
    in: 'query',
    required: false,
    schema: { type: 'string', pattern: '^\\d+$' },
  });
  t.same(params['query:verbose'], {
    name: 'verbose',
    in: 'query',
    required: true,
    schema: { enum: ['yes', 'no'], type: 'string' },
  });

  const body = op.requestBody.content['application/json'].schema;
  t.equal(op.requestBody.required, true);
  t.same(body.required, ['name', 'slug', 'tree']);
  t.same(body.properties.name, { type: 'string', minLength: 1, maxLength: 40 });
  t.same(body.properties.count, { type: 'integer', minimum: 1 });
  t.same(body.properties.slug, { type: 'string' });
  t.notOk('$schema' in body, 'no dialect marker inside the document');
  t.notOk('$defs' in body, 'definitions are moved to components');
  const treeRef = body.properties.tree.properties.children.$ref;
  t.match(treeRef, /^#\/components\/schemas\/Definition\d+$/);
  const treeDef = (doc.components.schemas as any)[treeRef.split('/').pop()];
  t.equal(treeDef.type, 'array');
  t.equal(treeDef.items.properties.children.$ref, treeRef, 'the recursive reference points at the moved definition');

  t.same(op.responses['201'], {
    description: 'Created',
    content: {
      'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
    },
  });
  t.same(op.responses['400'], { description: 'Bad body' });
  t.same(op.responses['409'].content, { 'text/plain': { schema: { type: 'string' } } });
  t.same(op.security, [{ bearerAuth: [], ucanAuthType: [] }, { ucanDelegation: [] }], 'UCAN unless public');
  t.same(op.responses['401'].content['application/json'].schema.required, ['statusCode', 'message', 'error']);
});

t.test('security: public, operator and UCAN routes; the schemes are declared', async (t) => {
  const doc = buildOpenApiDocument({ routes: describedRouter().routes, info });
  const open = doc.paths['/open'].get as any;
  t.same(open.security, []);
  t.notOk(open.responses, 'no 401 on a public route');
  t.same((doc.paths['/ops/{id}'].get as any).security, [{ operatorToken: [] }]);
  const bare = doc.paths['/bare/{x}'].delete as any;
  t.same(
    bare.parameters,
    [{ name: 'x', in: 'path', required: true, schema: { type: 'string' } }],
    'path parameters without a params schema',
  );
  t.ok(bare.responses['401']);
  const schemes = doc.components.securitySchemes as any;
  t.match(schemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'UCAN' });
  t.match(schemes.ucanAuthType, { type: 'apiKey', in: 'header', name: 'X-Auth-Type' });
  t.match(schemes.ucanDelegation, { type: 'apiKey', in: 'header', name: 'x-ucan-delegation' });
});

t.test('wildcards, hidden catch-alls and a face that describes its own routes', async (t) => {
  const doc = buildOpenApiDocument({ routes: describedRouter().routes, faces: [face, { name: 'plain' }], info });
  t.same((doc.paths['/catch/{path}'].get as any).parameters[0].name, 'path');
  t.notOk(doc.paths['/described-by-face/{path}'], 'hidden routes are left out');
  t.equal((doc.paths['/chain/entity/{id}'].get as any).operationId, 'entity');
  t.same((doc.components.schemas as any).Entity, { type: 'object', properties: { id: { type: 'string' } } });
  t.equal(
    (doc.paths['/open'].get as any).summary,
    'Public',
    'a face path merges with the router path of the same name',
  );
  t.equal((doc.paths['/open'].post as any).operationId, 'faceOpenPost');
});

t.test('malformed route docs are refused with the route named', async (t) => {
  const router = new Router();
  router.post('/bad', ok, { body: { not: 'a schema' } });
  t.throws(() => buildOpenApiDocument({ routes: router.routes, info }), /POST \/bad.*body must be a valibot schema/);
  const badStatus = new Router().get('/x', ok, { responses: { nope: { description: 'x' } } });
  t.throws(() => buildOpenApiDocument({ routes: badStatus.routes, info }), /GET \/x.*status codes/);
});
