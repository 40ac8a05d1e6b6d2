// The client address behind trusted proxies: X-Forwarded-For walked from the right over trusted hops (by count
// and by CIDR), forged and malformed entries, the rate limit keyed on the resolved address (IPv6 by /64), and
// operator routes that never believe forwarded addresses.
import t from 'tap';
import { createOperatorGuard } from '../dist/src/http/operator-guard.js';
import { compileProxyTrust, resolveForwarded, trustsProxies } from '../dist/src/http/proxy-trust.js';
import { ConfigError, loadConfig } from '../dist/src/app/config.js';
import { startTestServer } from './helpers/server.js';

const trust = (env: Record<string, string>) => compileProxyTrust(loadConfig(env))!;

t.test('resolution: hops from the right, CIDRs, entries that are not addresses', async (t) => {
  t.equal(compileProxyTrust(loadConfig({})), undefined, 'no proxy trusted by default');
  const oneHop = trust({ TRUST_PROXY_ENABLED: 'true' });
  t.equal(
    resolveForwarded('127.0.0.1', '127.0.0.1, 203.0.113.9', oneHop),
    '203.0.113.9',
    'the forged first entry is ignored',
  );
  t.equal(resolveForwarded('127.0.0.1', '127.evil.example, 203.0.113.9', oneHop), '203.0.113.9');
  t.equal(resolveForwarded('127.0.0.1', '203.0.113.9', oneHop), '203.0.113.9');
  t.equal(
    resolveForwarded('127.0.0.1', 'not-an-address', oneHop),
    '127.0.0.1',
    'garbage never becomes the client: its hop does',
  );
  t.equal(
    resolveForwarded('127.0.0.1', '::ffff:203.0.113.9', oneHop),
    '203.0.113.9',
    'IPv4-mapped entries are normalised',
  );

  const twoHops = trust({ TRUST_PROXY_HOPS: '2' });
  t.equal(resolveForwarded('127.0.0.1', '1.1.1.1, 198.51.100.7, 10.0.0.2', twoHops), '198.51.100.7');
  t.equal(resolveForwarded('127.0.0.1', '198.51.100.7, 10.0.0.2', twoHops), '198.51.100.7');
  t.equal(
    resolveForwarded('127.0.0.1', '198.51.100.7, garbage', twoHops),
    '127.0.0.1',
    'a non-address hop is not trusted',
  );
  t.equal(resolveForwarded('127.0.0.1', '10.0.0.2', twoHops), '10.0.0.2', 'a shorter chain ends at its last entry');

  const cidrs = trust({ TRUSTED_PROXIES: 'loopback, 10.0.0.0/8' });
  t.equal(
    resolveForwarded('127.0.0.1', '203.0.113.5, 10.1.1.1, 10.2.2.2', cidrs),
    '203.0.113.5',
    'every trusted hop is skipped',
  );
  t.equal(
    resolveForwarded('127.0.0.1', '10.9.9.9, 198.51.100.1, 10.1.1.1', cidrs),
    '198.51.100.1',
    'stops at the first untrusted hop',
  );
  t.equal(
    resolveForwarded('192.0.2.1', '203.0.113.5', cidrs),
    '192.0.2.1',
    'an untrusted peer is the client, whatever it forwards',
  );
  t.equal(resolveForwarded('127.0.0.1', '127.evil.example, 10.1.1.1', cidrs), '10.1.1.1');

  const both = trust({ TRUST_PROXY_HOPS: '1', TRUSTED_PROXIES: '10.0.0.0/8' });
  t.equal(resolveForwarded('10.0.0.1', '203.0.113.5, 10.1.1.1', both), '10.1.1.1', 'hops and CIDRs must both agree');
  t.equal(resolveForwarded('127.0.0.1', '203.0.113.5', both), '127.0.0.1');
});

t.test('configuration of proxies is validated', async (t) => {
  const problem = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      t.type(error, ConfigError);
      return (error as InstanceType<typeof ConfigError>).problems[0];
    }
  };
  t.match(problem({ TRUSTED_PROXIES: '10.0.0.0/8, proxy.example' }), /^TRUSTED_PROXIES=.*IP addresses, CIDRs/);
  t.match(problem({ TRUSTED_PROXIES: '10.0.0.0/33' }), /^TRUSTED_PROXIES=/);
  t.match(problem({ TRUST_PROXY_HOPS: '-1' }), /^TRUST_PROXY_HOPS=/);
});

/** Sends one request to `/` as the proxy would, with `forwardedFor`; the status tells whether its client's budget is spent. */
const via = (url: string, forwardedFor: string) =>
  fetch(`${url}/`, { headers: { 'x-forwarded-for': forwardedFor } }).then((r) => r.status);

t.test('rate limit: a client rotating its own entries keeps one budget (one hop)', async (t) => {
  const server = await startTestServer(t, { env: { RATE_LIMIT_MAX: '20', TRUST_PROXY_ENABLED: 'true' } });
  const statuses = [];
  for (let i = 0; i < 100; i++) statuses.push(await via(server.url, `198.18.${i >> 8}.${i & 255}, 203.0.113.9`));
  t.equal(statuses.filter((s) => s === 200).length, 20, '20 of 100 through a limit of 20');
  t.equal(await via(server.url, '203.0.113.10'), 200, 'another client has its own budget');
  const limited = await fetch(`${server.url}/`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.equal(limited.status, 429);
  t.ok(Number(limited.headers.get('retry-after')) >= 1);
});

t.test('rate limit: two hops, a CIDR list, IPv6 grouped by /64', async (t) => {
  const twoHops = await startTestServer(t, { env: { RATE_LIMIT_MAX: '1', TRUST_PROXY_HOPS: '2' } });
  t.equal(await via(twoHops.url, '198.51.100.7, 10.0.0.2'), 200);
  t.equal(
    await via(twoHops.url, '1.2.3.4, 198.51.100.7, 10.0.0.3'),
    429,
    'the same client through the other edge proxy',
  );
  t.equal(await via(twoHops.url, '198.51.100.8, 10.0.0.2'), 200);

  const cidrs = await startTestServer(t, { env: { RATE_LIMIT_MAX: '1', TRUSTED_PROXIES: '127.0.0.0/8,10.0.0.0/8' } });
  t.equal(await via(cidrs.url, '203.0.113.5, 10.1.1.1'), 200);
  t.equal(
    await via(cidrs.url, '9.9.9.9, 203.0.113.5, 10.2.2.2, 10.3.3.3'),
    429,
    'same client behind more trusted hops',
  );
  t.equal(
    await via(cidrs.url, '127.evil.example, 10.4.4.4'),
    200,
    'a malformed entry counts as the hop that forwarded it',
  );
  t.equal(await via(cidrs.url, 'bogus, 10.4.4.4'), 429);

  t.equal(await via(cidrs.url, '2001:db8:1:2::1'), 200);
  t.equal(await via(cidrs.url, '2001:db8:1:2:ffff:ffff:ffff:ffff'), 429, 'the same /64');
  t.equal(await via(cidrs.url, '2001:db8:1:3::1'), 200, 'another /64');
});

t.test('operator routes never believe forwarded addresses', async (t) => {
  // Behind any trusted proxy and without OPERATOR_TOKEN they are refused, whatever the address looks like.
  const request = (ip: string) =>
    ({ ip, headers: {} }) as unknown as Parameters<ReturnType<typeof createOperatorGuard>>[0];
  for (const env of [{ TRUST_PROXY_ENABLED: 'true' }, { TRUST_PROXY_HOPS: '2' }, { TRUSTED_PROXIES: '127.0.0.0/8' }]) {
    const guard = createOperatorGuard(undefined, trustsProxies(loadConfig(env)));
    t.throws(() => guard(request('127.0.0.1')), { name: 'HttpError', status: 403 }, JSON.stringify(env));
  }
  t.doesNotThrow(
    () => createOperatorGuard(undefined, trustsProxies(loadConfig({})))(request('127.0.0.1')),
    'loopback without a proxy',
  );

  const server = await startTestServer(t, { env: { TRUST_PROXY_ENABLED: 'true' } });
  for (const forwarded of [undefined, '127.0.0.1', '127.evil.example', '127.0.0.1, 127.0.0.1', '::1']) {
    const res = await fetch(`${server.url}/api/ussd/sessions`, {
      headers: forwarded ? { 'x-forwarded-for': forwarded } : {},
    });
    t.equal(res.status, 403, `X-Forwarded-For: ${forwarded}`);
    t.match(await res.json(), {
      statusCode: 403,
      error: 'Forbidden',
      message: /trusted proxy is configured.*OPERATOR_TOKEN/,
    });
  }
  // With a token, the token decides.
  const token = await startTestServer(t, { env: { TRUST_PROXY_ENABLED: 'true', OPERATOR_TOKEN: 'op-secret' } });
  t.equal((await fetch(`${token.url}/api/ussd/sessions`, { headers: { 'x-forwarded-for': '127.0.0.1' } })).status, 401);
  const auth = { authorization: 'Bearer op-secret', 'x-forwarded-for': '203.0.113.9' };
  t.equal((await fetch(`${token.url}/api/ussd/sessions`, { headers: auth })).status, 200);
});
