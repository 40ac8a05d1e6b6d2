// Golden Cosmos REST JSON (gogoproto jsonpb, OrigName + EmitDefaults) for every kind of field: the
// expected texts are written out by hand, so field order and formatting are checked exactly.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { CosmosJson } from '../dist/src/gateway/cosmos-json.js';
import { loadProtoFiles } from '../dist/src/gateway/proto-root.js';

const root = loadProtoFiles(['kitchen.proto'], [fileURLToPath(new URL('./fixtures/gateway/', import.meta.url))]);
const Kitchen = root.lookupType('test.kitchen.v1.Kitchen');
const Scalars = root.lookupType('test.kitchen.v1.Scalars');
const Timestamp = root.lookupType('google.protobuf.Timestamp');
const json = new CosmosJson(root);

/** Through the wire, as the gateway sees upstream answers. */
function render(type = Kitchen, object: Record<string, unknown> = {}): string {
  const decoded = type.decode(type.encode(type.fromObject(object)).finish());
  return json.stringify(type, decoded);
}

const DEFAULT_SCALARS =
  '{"d":0,"f":0,"i32":0,"i64":"0","u32":0,"u64":"0","s32":0,"s64":"0","fx32":0,"fx64":"0","sfx32":0,"sfx64":"0","b":false,"s":"","by":null}';

t.test(
  'defaults are emitted: zero scalars, "0" for 64-bit, [] and {} for repeated and maps, null for messages',
  async (t) => {
    t.equal(
      render(),
      '{"snake_case_name":"","camelCaseName":"","scalars":null,"color":"COLOR_UNSPECIFIED","colors":[],"at":null,"took":null,"any":null,' +
        '"tags":[],"counts":{},"child":null,"wrapped":null,"extra":null,"blobs":[],"list":[]}',
    );
    t.equal(render(Scalars), DEFAULT_SCALARS);
  },
);

t.test('every scalar kind at its extremes, names as declared (snake_case and camelCase)', async (t) => {
  const scalars = {
    d: 1e-7,
    f: 0.1,
    i32: -2147483648,
    i64: '-9223372036854775808',
    u32: 4294967295,
    u64: '18446744073709551615',
    s32: -5,
    s64: '-5',
    fx32: 7,
    fx64: '18446744073709551614',
    sfx32: -7,
    sfx64: '-7',
    b: true,
    s: 'héllo "q"',
    by: Buffer.from([0, 1, 2, 250, 251, 255]),
  };
  t.equal(
    render(Scalars, scalars),
    '{"d":1e-7,"f":0.1,"i32":-2147483648,"i64":"-9223372036854775808","u32":4294967295,"u64":"18446744073709551615",' +
      '"s32":-5,"s64":"-5","fx32":7,"fx64":"18446744073709551614","sfx32":-7,"sfx64":"-7","b":true,"s":"héllo \\"q\\"","by":"AAEC+vv/"}',
  );
  const named = JSON.parse(render(Kitchen, { snake_case_name: 'a', camelCaseName: 'b' }));
  t.same(Object.keys(named).slice(0, 2), ['snake_case_name', 'camelCaseName']);
});

t.test('floats: float32 printed as its shortest decimal, non-finite values as strings', async (t) => {
  t.equal(JSON.parse(render(Scalars, { f: 3.4028234663852886e38 })).f, 3.4028235e38);
  t.equal(JSON.parse(render(Scalars, { f: 1.1 })).f, 1.1);
  const special = JSON.parse(render(Scalars, { d: NaN, f: Infinity }));
  t.equal(special.d, 'NaN');
  t.equal(special.f, 'Infinity');
  t.equal(JSON.parse(render(Scalars, { d: -Infinity })).d, '-Infinity');
});

t.test('enums by name; a number the enum does not know stays a number', async (t) => {
  const out = JSON.parse(render(Kitchen, { color: 'RED', colors: ['GREEN', 7, 'COLOR_UNSPECIFIED'] }));
  t.equal(out.color, 'RED');
  t.same(out.colors, ['GREEN', 7, 'COLOR_UNSPECIFIED']);
});

t.test('timestamps: RFC 3339 UTC with Z and 0, 3, 6 or 9 fraction digits', async (t) => {
  const at = (seconds: number, nanos = 0) => JSON.parse(render(Kitchen, { at: { seconds, nanos } })).at;
  t.equal(at(1704164645), '2024-01-02T03:04:05Z');
  t.equal(at(1704164645, 500_000_000), '2024-01-02T03:04:05.500Z');
  t.equal(at(1704164645, 123_456_000), '2024-01-02T03:04:05.123456Z');
  t.equal(at(1704164645, 1), '2024-01-02T03:04:05.000000001Z');
  t.equal(at(-1), '1969-12-31T23:59:59Z');
  t.equal(at(0), '1970-01-01T00:00:00Z');
});

t.test('timestamps across years 0001-9999 agree with Date#toISOString (leap years, century rules)', async (t) => {
  const min = Date.UTC(1, 0, 1) / 1000;
  const max = Date.UTC(9999, 11, 31, 23, 59, 59) / 1000;
  const samples = [
    min,
    max,
    Date.UTC(2000, 1, 29) / 1000,
    Date.UTC(1900, 2, 1) / 1000 - 1,
    Date.UTC(2100, 1, 28, 23, 59, 59) / 1000,
  ];
  for (let i = 0; i < 500; i++) samples.push(Math.floor(min + ((max - min) * i) / 500) + i * 7919);
  let mismatches = 0;
  for (const seconds of samples) {
    const expected = new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
    const actual = JSON.parse(render(Kitchen, { at: { seconds } })).at;
    if (actual !== expected) mismatches++, t.equal(actual, expected, String(seconds));
  }
  t.equal(mismatches, 0, `${samples.length} instants`);
});

t.test('durations: seconds with 0, 3, 6 or 9 fraction digits and an s', async (t) => {
  const took = (seconds: number, nanos = 0) => JSON.parse(render(Kitchen, { took: { seconds, nanos } })).took;
  t.equal(took(1, 500_000_000), '1.500s');
  t.equal(took(0), '0s');
  t.equal(took(3600), '3600s');
  t.equal(took(-1, -500_000_000), '-1.500s');
  t.equal(took(0, -1000), '-0.000001s');
  t.equal(took(2, 1), '2.000000001s');
});

t.test('bytes: standard base64; empty singular bytes are null, empty elements of repeated bytes are ""', async (t) => {
  t.equal(JSON.parse(render(Scalars, { by: Buffer.from('hi?>') })).by, 'aGk/Pg==');
  t.equal(JSON.parse(render(Scalars, { by: Buffer.alloc(0) })).by, null);
  t.same(JSON.parse(render(Kitchen, { blobs: [Buffer.alloc(0), Buffer.from([1])] })).blobs, ['', 'AQ==']);
});

t.test('Any: @type then the fields of the packed message; a well-known packed type goes under value', async (t) => {
  const packed = Scalars.encode(Scalars.fromObject({ i64: '9', s: 'x' })).finish();
  t.equal(
    JSON.stringify(JSON.parse(render(Kitchen, { any: { type_url: '/test.kitchen.v1.Scalars', value: packed } })).any),
    '{"@type":"/test.kitchen.v1.Scalars","d":0,"f":0,"i32":0,"i64":"9","u32":0,"u64":"0","s32":0,"s64":"0","fx32":0,"fx64":"0","sfx32":0,"sfx64":"0","b":false,"s":"x","by":null}',
  );
  const time = Timestamp.encode(Timestamp.fromObject({ seconds: 1704164645, nanos: 5_000_000 })).finish();
  t.same(
    JSON.parse(render(Kitchen, { any: { type_url: 'type.googleapis.com/google.protobuf.Timestamp', value: time } }))
      .any,
    {
      '@type': 'type.googleapis.com/google.protobuf.Timestamp',
      value: '2024-01-02T03:04:05.005Z',
    },
  );
});

t.test('Any of a type the descriptors do not hold keeps its bytes as base64', async (t) => {
  t.same(
    JSON.parse(render(Kitchen, { any: { type_url: '/cosmos.bank.v1beta1.MsgSend', value: Buffer.from([1, 2]) } })).any,
    {
      '@type': '/cosmos.bank.v1beta1.MsgSend',
      value: 'AQI=',
    },
  );
});

t.test('oneof: only the set member, at the oneof position, even when set to its default', async (t) => {
  const keys = (object: Record<string, unknown>) => Object.keys(JSON.parse(render(Kitchen, object)));
  t.same(keys({ name: '' }).slice(7, 10), ['any', 'name', 'tags']);
  t.equal(JSON.parse(render(Kitchen, { name: '' })).name, '');
  const number = JSON.parse(render(Kitchen, { number: '5' }));
  t.equal(number.number, '5');
  t.notOk('name' in number);
  t.notOk('nested' in number);
  t.equal(JSON.stringify(JSON.parse(render(Kitchen, { nested: {} })).nested), DEFAULT_SCALARS);
  t.notOk(['name', 'number', 'nested'].some((key) => key in JSON.parse(render()))), 'an unset oneof is left out';
});

t.test('maps, wrappers, Struct, repeated and recursive messages', async (t) => {
  const out = JSON.parse(
    render(Kitchen, {
      counts: { a: '1', b: '-2' },
      wrapped: { value: '42' },
      extra: {
        fields: {
          // protobufjs's bundled struct.proto names these fields in camelCase.
          x: { numberValue: 1.5 },
          y: { listValue: { values: [{ stringValue: 'a' }, { boolValue: true }, { nullValue: 0 }] } },
          z: { structValue: { fields: { w: { stringValue: 'v' } } } },
        },
      },
      list: [{}, { u64: '3' }],
      child: { tags: ['inner'], child: { camelCaseName: 'deepest' } },
    }),
  );
  t.same(out.counts, { a: '1', b: '-2' });
  t.equal(out.wrapped, '42');
  t.same(out.extra, { x: 1.5, y: ['a', true, null], z: { w: 'v' } });
  t.equal(out.list.length, 2);
  t.equal(out.list[1].u64, '3');
  t.same(out.child.tags, ['inner']);
  t.equal(out.child.child.camelCaseName, 'deepest');
  t.equal(out.child.child.child, null);
});
