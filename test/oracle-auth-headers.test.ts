// Which header values are UCAN artifacts: the bearer only with `X-Auth-Type: ucan`, the scheme and the
// surrounding whitespace stripped; `x-ucan-delegation` as sent (trimmed).
import t from 'tap';
import { artifactsFromHeaders } from '../dist/src/oracle/auth/authenticator.js';

const bearer = (authorization: string, type = 'ucan') =>
  artifactsFromHeaders({ authorization, 'x-auth-type': type }).invocation;

t.test('the bearer token of an X-Auth-Type: ucan request', async (t) => {
  t.equal(bearer('Bearer abc+/='), 'abc+/=');
  t.equal(bearer('  bearer\tabc  '), 'abc', 'scheme case and surrounding whitespace do not matter');
  t.equal(bearer('BEARER a b'), 'a b', 'inner whitespace is left for the decoder to refuse');
  t.equal(bearer('Bearer abc', ' UCAN '), 'abc');
  t.equal(bearer('Bearer'), undefined, 'no token');
  t.equal(bearer('Bearer    '), undefined, 'blank token');
  t.equal(bearer('Basic abc'), undefined, 'another scheme');
  t.equal(bearer('Bearerabc'), undefined, 'no separator');
  t.equal(bearer('Bearer abc', 'jwt'), undefined, 'not declared a UCAN');
  t.same(artifactsFromHeaders({ authorization: 'Bearer abc' }), {}, 'no X-Auth-Type');
  t.same(artifactsFromHeaders({ 'x-ucan-delegation': '  d  ' }), { delegation: 'd' });
});
