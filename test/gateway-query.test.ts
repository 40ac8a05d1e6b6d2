// Query parameters and path values -> request fields (grpc-gateway v1 rules), checked on the encoded
// request so what reaches the node is what is asserted.
import t from 'tap';
import type { Test } from 'tap';
import { fileURLToPath } from 'node:url';
import { HttpError } from '../dist/src/http/errors.js';
import { loadProtoFiles } from '../dist/src/gateway/proto-root.js';
import { RequestMapper } from '../dist/src/gateway/request-mapper.js';

const root = loadProtoFiles(['kitchen.proto'], [fileURLToPath(new URL('./fixtures/gateway/', import.meta.url))]);
const Echo = root.lookupType('test.kitchen.v1.EchoRequest');
const mapper = new RequestMapper(Echo, [['id']]);

/** The request the node would decode, as a plain object (64-bit as strings, enums by name, bytes base64). */
function request(query: string, id = 'x'): Record<string, any> {
  return Echo.toObject(Echo.decode(mapper.encode(new Map([['id', id]]), query)), {
    longs: String,
    enums: String,
    bytes: String,
  });
}

function refused(t: Test, query: string, field: string) {
  try {
    request(query);
    t.fail(`${query} was accepted`);
  } catch (error) {
    t.ok(error instanceof HttpError, query);
    t.equal((error as HttpError).status, 400, query);
    t.match(
      (error as HttpError).body,
      { code: 3, message: new RegExp(`"${field.replace('.', '\\.')}"`), details: [] },
      query,
    );
  }
}

t.test('dotted paths with proto or JSON names', async (t) => {
  t.same(request('page.limit=5&page.count_total=true').page, { limit: '5', count_total: true });
  t.same(request('page.countTotal=1&page.limit=0x10').page, { limit: '16', count_total: true });
  t.equal(request('scalars.i64=-9223372036854775808').scalars.i64, '-9223372036854775808');
  t.equal(request('scalars.u64=18446744073709551615').scalars.u64, '18446744073709551615');
});

t.test('integers parse like Go strconv with base 0', async (t) => {
  t.equal(request('scalars.i32=-2147483648').scalars.i32, -2147483648);
  t.equal(request('scalars.i32=0x7fffffff').scalars.i32, 2147483647);
  t.equal(request('scalars.u32=010').scalars.u32, 8, 'a leading 0 is octal');
  t.equal(request('scalars.u32=0b101').scalars.u32, 5);
  t.equal(request('scalars.i64=1_000').scalars.i64, '1000');
  for (const bad of ['2147483648', '1.5', '', 'abc', '0x', '1__0']) refused(t, `scalars.i32=${bad}`, 'scalars.i32');
  refused(t, 'scalars.u64=-1', 'scalars.u64');
  refused(t, 'scalars.u64=18446744073709551616', 'scalars.u64');
  refused(t, 'scalars.u32=+1', 'scalars.u32');
});

t.test('bools accept 1/0/t/f/true/false (Go ParseBool) and nothing else', async (t) => {
  for (const yes of ['1', 't', 'T', 'true', 'TRUE', 'True']) t.equal(request(`scalars.b=${yes}`).scalars.b, true, yes);
  for (const no of ['0', 'f', 'F', 'false', 'FALSE', 'False']) t.notOk(request(`scalars.b=${no}`).scalars?.b, no);
  for (const bad of ['yes', 'on', '2', 'tRuE']) refused(t, `scalars.b=${bad}`, 'scalars.b');
});

t.test('floats, strings', async (t) => {
  t.equal(request('scalars.d=1.5e3').scalars.d, 1500);
  t.equal(request('scalars.d=-inf').scalars.d, -Infinity);
  t.ok(Number.isNaN(request('scalars.d=NaN').scalars.d));
  refused(t, 'scalars.f=1e39', 'scalars.f');
  refused(t, 'scalars.d=1,5', 'scalars.d');
  t.equal(request('scalars.s=a%20b%2Bc').scalars.s, 'a b+c');
});

t.test('bytes: standard base64, then URL-safe', async (t) => {
  t.equal(request('scalars.by=%2B%2F8%3D').scalars.by, '+/8=');
  t.equal(request('scalars.by=-_8').scalars.by, '+/8=');
  t.equal(request('page.key=ZGlkOml4bw==').page.key, 'ZGlkOml4bw==');
  refused(t, 'scalars.by=***', 'scalars.by');
  refused(t, 'scalars.by=A', 'scalars.by');
});

t.test('enums by name or number; unknown names and numbers are refused', async (t) => {
  t.equal(request('color=GREEN').color, 'GREEN');
  t.equal(request('color=1').color, 'RED');
  refused(t, 'color=BLUE', 'color');
  refused(t, 'color=9', 'color');
});

t.test('repeated keys fill repeated fields; first value wins for singular fields', async (t) => {
  const out = request('nums=1&nums=-2&words=a&words=b&colors=RED&colors=2&scalars.s=first&scalars.s=second');
  t.same(out.nums, [1, -2]);
  t.same(out.words, ['a', 'b']);
  t.same(out.colors, ['RED', 'GREEN']);
  t.equal(out.scalars.s, 'first');
  refused(t, 'nums=1&nums=x', 'nums');
});

t.test('unknown keys are ignored; path-bound fields are not read from the query', async (t) => {
  const out = request('nope=1&page.nope=2&map[x]=1&id=other', 'from-path');
  t.equal(out.id, 'from-path');
  t.notOk(out.page);
  refused(t, 'scalars=1', 'scalars');
});

t.test('oneof: one member per request', async (t) => {
  t.equal(request('first=a').first, 'a');
  refused(t, 'first=a&second=b', 'second');
});

t.test('well-known types from text: Timestamp, Duration, wrappers', async (t) => {
  const out = request('at=2024-01-02T03:04:05.5Z&took=1.5s&flag=true');
  t.same(out.at, { seconds: '1704164645', nanos: 500000000 });
  t.same(out.took, { seconds: '1', nanos: 500000000 });
  t.same(out.flag, { value: true });
  refused(t, 'at=yesterday', 'at');
  refused(t, 'took=5', 'took');
});

t.test('path values are typed too, and a template variable must name a singular field', async (t) => {
  const nested = new RequestMapper(Echo, [['scalars', 'i64'], ['color']]);
  const message = Echo.decode(
    nested.encode(
      new Map([
        ['scalars.i64', '-7'],
        ['color', 'RED'],
      ]),
      'scalars.i64=9',
    ),
  );
  const out = Echo.toObject(message, { longs: String, enums: String });
  t.same(out.scalars, { i64: '-7' });
  t.equal(out.color, 'RED');
  t.throws(
    () =>
      nested.encode(
        new Map([
          ['scalars.i64', 'x'],
          ['color', 'RED'],
        ]),
        '',
      ),
    HttpError,
  );
  t.throws(() => new RequestMapper(Echo, [['nums']]), /not a singular field/);
  t.throws(() => new RequestMapper(Echo, [['nope']]), /not a singular field/);
});

t.test('a request nothing sets (no path variables, only unknown keys) is the empty message', async (t) => {
  const bare = new RequestMapper(Echo, []);
  t.equal(bare.encode(new Map(), '').byteLength, 0);
  t.equal(bare.encode(new Map(), 'unknown=1&bench=2').byteLength, 0);
  t.same(Echo.toObject(Echo.decode(bare.encode(new Map(), 'unknown=1&flag=true'))), { flag: { value: true } });
  t.throws(() => bare.encode(new Map(), 'flag=maybe'), HttpError, 'known keys are still parsed');
});
