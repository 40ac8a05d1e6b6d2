// The oracle plugins' public routes: protected by default, public routes from plugins and AUTH_EXCLUDED_ROUTES,
// with a real authenticator and real invocations.
import t from 'tap';
import { Router } from '../dist/src/http/router.js';
import { HttpError } from '../dist/src/http/errors.js';
import type { HttpRequest } from '../dist/src/http/types.js';
import { createAuthenticator, inProcessVerifier, MISSING_UCAN_MESSAGE } from '../dist/src/oracle/auth/index.js';
import { exclusionMatcher, OracleRouteAuth } from '../dist/src/oracle/identity/route-auth.js';
import { mountRoutes } from '../dist/src/http/route.js';
import { refuseInput } from '../dist/src/oracle/errors.js';
import { generateKey, mintInvocation } from '../dist/src/tools/mint-ucan.js';

const oracle = await generateKey();
const user = await generateKey();

function request(path: string, headers: Record<string, string> = {}): HttpRequest {
  return {
    method: 'GET',
    path,
    rawQuery: '',
    query: new URLSearchParams(),
    headers,
    params: {},
    ip: '127.0.0.1',
    requestId: 'r',
    body: undefined,
    signal: new AbortController().signal,
  };
}

t.test('exclusion entries: patterns, wildcards, plain paths', async (t) => {
  t.ok(exclusionMatcher('/webhooks/*').test('/webhooks/matrix'));
  t.ok(exclusionMatcher('/webhooks/*').test('/webhooks/a/b'));
  t.notOk(exclusionMatcher('/webhooks/*').test('/webhooksx'));
  t.ok(exclusionMatcher('/docs/(.*)').test('/docs/index.css'));
  t.ok(exclusionMatcher('/hooks/:name').test('/hooks/github'));
  t.ok(exclusionMatcher('/hooks/:name').test('/hooks/:name'), 'a pattern matches itself');
  t.notOk(exclusionMatcher('/hooks/:name').test('/hooks/a/b'));
  t.ok(exclusionMatcher('/cron/run/').test('/cron/run'));
  t.notOk(exclusionMatcher('/a.b').test('/aXb'), 'dots are literal');
});

t.test('excluded routes are public in their docs; a UCAN route still learns its caller', async (t) => {
  const authenticator = createAuthenticator({
    oracleDid: oracle.did(),
    maxTtlSeconds: 900,
    verifier: inProcessVerifier(),
  });
  const auth = new OracleRouteAuth(authenticator, ['/webhooks/*', '/user-data']);
  const seen: string[] = [];
  const handler = async ({ req, identity }: { req: HttpRequest; identity?: { did: string } }) => {
    seen.push(`${req.path} ${identity?.did ?? 'anonymous'}`);
    return { status: 200, contentType: 'text/plain', body: 'ok' };
  };
  const target = new Router();
  const routes = auth.withExclusions([
    { method: 'GET', path: '/private', auth: 'ucan', summary: 'private', handler },
    { method: 'POST', path: '/webhooks/matrix', auth: 'public', summary: 'hook', handler },
    { method: 'GET', path: '/user-data', auth: 'ucan', handler },
  ]);
  mountRoutes(
    target,
    { guards: { ucan: (req: HttpRequest) => authenticator.authenticate(req.headers) }, invalid: refuseInput },
    routes,
  );
  const [privateRoute, webhook, excluded] = target.routes;
  t.same(privateRoute.docs, { auth: 'ucan', summary: 'private' });
  t.same(webhook.docs, { auth: 'public', summary: 'hook' });
  t.same(excluded.docs, { auth: 'public' }, 'an excluded UCAN route is documented as public');

  const refused = await Promise.resolve(privateRoute.handler(request('/private'), {} as never)).catch(
    (e: unknown) => e,
  );
  t.ok(refused instanceof HttpError);
  t.equal((refused as HttpError).status, 401);
  t.equal((refused as HttpError).message, MISSING_UCAN_MESSAGE);
  t.same(seen, [], 'the handler did not run');

  const invocation = await mintInvocation({ issuer: user, audience: oracle.did() });
  const headers = { authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' };
  await privateRoute.handler(request('/private', headers), {} as never);
  await webhook.handler(
    request('/webhooks/matrix', { authorization: 'Bearer garbage', 'x-auth-type': 'ucan' }),
    {} as never,
  );
  const anonymous = await Promise.resolve(excluded.handler(request('/user-data'), {} as never)).catch(
    (e: unknown) => e,
  );
  t.equal((anonymous as HttpError).status, 401, 'an excluded route that needs its caller still asks for a UCAN');
  await excluded.handler(request('/user-data', headers), {} as never);
  t.same(seen, [`/private ${user.did()}`, '/webhooks/matrix anonymous', `/user-data ${user.did()}`]);
});
