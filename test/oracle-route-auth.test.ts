// The oracle's route guard: protected by default, public routes from plugins and AUTH_EXCLUDED_ROUTES,
// with a real authenticator and real invocations.
import t from 'tap';
import { Router } from '../dist/src/http/router.js';
import { HttpError } from '../dist/src/http/errors.js';
import type { HttpRequest } from '../dist/src/http/types.js';
import { createAuthenticator, inProcessVerifier, MISSING_UCAN_MESSAGE } from '../dist/src/oracle/auth/index.js';
import { exclusionMatcher, GuardedRouter, OracleRouteAuth } from '../dist/src/oracle/route-auth.js';
import { generateKey, mintInvocation } from '../dist/src/tools/mint-ucan.js';

const oracle = await generateKey();
const user = await generateKey();

function request(path: string, headers: Record<string, string> = {}): HttpRequest {
  return {
    method: 'GET', path, rawQuery: '', query: new URLSearchParams(), headers, params: {}, ip: '127.0.0.1',
    requestId: 'r', body: undefined, signal: new AbortController().signal,
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

t.test('guarded routes authenticate first; public ones do not read the headers', async (t) => {
  const authenticator = createAuthenticator({ oracleDid: oracle.did(), maxTtlSeconds: 900, verifier: inProcessVerifier() });
  const auth = new OracleRouteAuth(authenticator, ['/webhooks/*', '/hooks/github']);
  const target = new Router();
  const guarded = new GuardedRouter(target, auth);
  const seen: string[] = [];
  const handler = async (req: HttpRequest) => {
    seen.push(req.path);
    return { status: 200, contentType: 'text/plain', body: 'ok' };
  };
  guarded.get('/private', handler, { summary: 'private' });
  guarded.post('/webhooks/matrix', handler, { summary: 'hook' });
  guarded.get('/hooks/:name', handler);

  const [privateRoute, webhook, hooks] = target.routes;
  t.same(privateRoute.docs, { summary: 'private' });
  t.same(webhook.docs, { summary: 'hook', public: true }, 'public routes say so in their docs');

  const refused = await Promise.resolve(privateRoute.handler(request('/private'), {} as never)).catch((e: unknown) => e);
  t.ok(refused instanceof HttpError);
  t.equal((refused as HttpError).status, 401);
  t.equal((refused as HttpError).message, MISSING_UCAN_MESSAGE);
  t.same(seen, [], 'the handler did not run');

  const invocation = await mintInvocation({ issuer: user, audience: oracle.did() });
  const req = request('/private', { authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' });
  await privateRoute.handler(req, {} as never);
  t.equal((await auth.identity(req)).did, user.did(), 'the handler can read the identity');

  await webhook.handler(request('/webhooks/matrix', { authorization: 'Bearer garbage', 'x-auth-type': 'ucan' }), {} as never);
  await hooks.handler(request('/hooks/github'), {} as never);
  const other = await Promise.resolve(hooks.handler(request('/hooks/gitlab'), {} as never)).catch((e: unknown) => e);
  t.equal((other as HttpError).status, 401, 'only the excluded concrete path is public');
  t.same(seen, ['/private', '/webhooks/matrix', '/hooks/github']);
});
