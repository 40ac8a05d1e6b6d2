// Path templates (google.api.http syntax) and the route table built from the bundled ixo descriptors.
import t from 'tap';
import { bundledSchema } from '../dist/src/gateway/descriptors.js';
import { matchTemplate, openApiPath, parseTemplate, TemplateError } from '../dist/src/gateway/path-template.js';
import { RouteTable } from '../dist/src/gateway/route-table.js';

const bind = (template: string, path: string) => {
  const bound = matchTemplate(parseTemplate(template), path);
  return bound && Object.fromEntries(bound);
};

t.test('{id} binds one segment; a last segment with colons is a plain value', async (t) => {
  t.same(bind('/ixo/entity/{id}', '/ixo/entity/did:ixo:entity:abc'), { id: 'did:ixo:entity:abc' });
  t.same(bind('/ixo/entity/{id}/metadata', '/ixo/entity/did:ixo:entity:abc/metadata'), { id: 'did:ixo:entity:abc' });
  t.equal(bind('/ixo/entity/{id}', '/ixo/entity/a/b'), undefined);
  t.equal(bind('/ixo/entity/{id}', '/ixo/entity/'), undefined, 'an empty segment binds nothing');
  t.equal(bind('/ixo/entity/{id}', '/ixo/entity'), undefined);
  t.equal(bind('/ixo/entity/params', '/ixo/entity/param'), undefined);
});

t.test('segments are percent-decoded', async (t) => {
  t.same(bind('/ixo/entity/{id}', '/ixo/entity/did%3Aixo%3Aentity%3Aa%2Fb'), { id: 'did:ixo:entity:a/b' });
  t.same(bind('/x/{name}', '/x/caf%C3%A9'), { name: 'café' });
  t.equal(bind('/x/{name}', '/x/%E0%A4%A'), undefined, 'bad escapes match nothing');
});

t.test('{path=**} binds the rest of the path; {name=a/*} binds a sub-path; dotted field paths', async (t) => {
  t.same(bind('/files/{path=**}', '/files/a/b/c.txt'), { path: 'a/b/c.txt' });
  t.same(bind('/files/{path=**}', '/files/one'), { path: 'one' });
  t.same(bind('/v1/{name=shelves/*/books/*}', '/v1/shelves/s1/books/b2'), { name: 'shelves/s1/books/b2' });
  t.equal(bind('/v1/{name=shelves/*/books/*}', '/v1/shelves/s1/book/b2'), undefined);
  t.same(bind('/v1/{page.key}/{id}', '/v1/k/7'), { 'page.key': 'k', id: '7' });
  t.same(bind('/a/*/{id}', '/a/anything/7'), { id: '7' });
});

t.test('a verb in the template must be present; without one, colons stay in the value', async (t) => {
  t.same(bind('/v1/{name}:cancel', '/v1/op1:cancel'), { name: 'op1' });
  t.equal(bind('/v1/{name}:cancel', '/v1/op1'), undefined);
  t.same(bind('/v1/{name}', '/v1/op1:cancel'), { name: 'op1:cancel' });
});

t.test('bad templates are refused', async (t) => {
  for (const bad of ['ixo/entity', '/a/{id', '/a/{id}}', '/a/{1x}', '/a/**/b', '/a//b', '/a/{x={y}}']) {
    t.throws(() => parseTemplate(bad), TemplateError, bad);
  }
});

t.test('OpenAPI path form', async (t) => {
  t.equal(openApiPath(parseTemplate('/files/{path=**}')), '/files/{path}');
  t.equal(
    openApiPath(parseTemplate('/ixo/claims/intent/{agentAddress}/{collectionId}/{id}')),
    '/ixo/claims/intent/{agentAddress}/{collectionId}/{id}',
  );
});

t.test('route table from the bundled descriptors: every annotated method, first declared pattern wins', async (t) => {
  const table = RouteTable.build(bundledSchema(), { legacy: false });
  // The count of routes against the annotations: gateway-annotations.test.ts.
  const target = (path: string) => table.match(path)?.route.method.grpcPath;
  t.equal(target('/ixo/entity/params'), '/ixo.entity.v1beta1.Query/Params', 'Params is declared before Entity {id}');
  t.equal(target('/ixo/entity/did:ixo:entity:1'), '/ixo.entity.v1beta1.Query/Entity');
  t.equal(target('/ixo/entity'), '/ixo.entity.v1beta1.Query/EntityList');
  t.equal(target('/ixo/did/dids/did:x:1'), '/ixo.iid.v1beta1.Query/IidDocument');
  t.equal(target('/ixo/claims/collection/1/member/ixo1m'), '/ixo.claims.v1beta1.Query/CollectionMember');
  t.equal(target('/ixo/claims/dispute-by-subject/c1/1'), '/ixo.claims.v1beta1.Query/DisputeBySubject');
  t.equal(target('/ixo/token/minter/ixo1a/ixo1c'), '/ixo.token.v1beta1.Query/TokenDoc');
  t.equal(target('/ixo/token/ixo1a'), undefined, 'legacy paths are off by default');
  t.equal(target('/cosmos/nope/v1beta1/x'), undefined);
});

t.test('legacy aliases come after the current routes', async (t) => {
  const table = RouteTable.build(bundledSchema(), { legacy: true });
  t.equal(
    table.routes.length - RouteTable.build(bundledSchema(), { legacy: false }).routes.length,
    8,
    'eight legacy aliases',
  );
  const match = (path: string) => table.match(path);
  t.equal(match('/ixo/token/ixo1a')?.route.method.grpcPath, '/ixo.token.v1beta1.Query/TokenList');
  t.equal(match('/ixo/token/ixo1a')?.route.legacy, true);
  t.equal(
    match('/ixo/token/params')?.route.method.grpcPath,
    '/ixo.token.v1beta1.Query/Params',
    'the current route wins',
  );
  t.equal(match('/ixo/token/metadata/x')?.route.method.grpcPath, '/ixo.token.v1beta1.Query/TokenMetadata');
  t.equal(match('/ixo/collection/7')?.route.method.grpcPath, '/ixo.claims.v1beta1.Query/Collection');
  t.same(Object.fromEntries(match('/ixo/token/ixo1a/ixo1c')!.bound), { minter: 'ixo1a', contract_address: 'ixo1c' });
});

t.test(
  'a literal template shadowed by an earlier variable template stays shadowed (exact paths are looked up first)',
  async (t) => {
    const schema = bundledSchema();
    const params = schema.methods.find((method) => method.grpcPath === '/ixo.entity.v1beta1.Query/Params')!;
    const entity = schema.methods.find((method) => method.grpcPath === '/ixo.entity.v1beta1.Query/Entity')!;
    const table = RouteTable.build(
      {
        ...schema,
        methods: [
          { ...entity, patterns: ['/ixo/entity/{id}'] },
          { ...params, patterns: ['/ixo/entity/params', '/ixo/params'] },
        ],
      },
      { legacy: false },
    );
    t.equal(table.match('/ixo/entity/params')?.route.method.grpcPath, entity.grpcPath, 'declared first wins');
    t.same(Object.fromEntries(table.match('/ixo/entity/params')!.bound), { id: 'params' });
    t.equal(table.match('/ixo/params')?.route.method.grpcPath, params.grpcPath);
    t.equal(table.match('/ixo/params')?.bound.size, 0);
    t.equal(table.match('/ixo/params/'), undefined);
    t.equal(
      table.match('/ixo/%70arams')?.route.method.grpcPath,
      params.grpcPath,
      'a percent-encoded path still matches by segments',
    );
  },
);
