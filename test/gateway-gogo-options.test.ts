// LegacyDec text both ways: the scaled integer on the wire <-> the 18-decimal text of a node's REST
// (cosmossdk.io/math LegacyDec.String()), and the local node's fixture parsing.
import t from 'tap';
import fc from 'fast-check';
import { CosmosJson } from '../dist/src/gateway/cosmos-json.js';
import { schemaFromFileDescriptors } from '../dist/src/gateway/descriptors.js';
import { formatDec, parseDec } from '../dist/src/gateway/gogo-options.js';
import { bytes, message, msg, num } from './fixtures/gateway/wire.js';

t.test('formatDec writes 18 decimals like LegacyDec.String()', async (t) => {
  t.equal(formatDec('0'), '0.000000000000000000');
  t.equal(formatDec('1'), '0.000000000000000001');
  t.equal(formatDec('100000000000000000'), '0.100000000000000000');
  t.equal(formatDec('-1500000000000000000'), '-1.500000000000000000');
  t.equal(formatDec('123456789012345678901234567890'), '123456789012.345678901234567890');
  t.equal(formatDec('0001'), '0.000000000000000001', 'leading zeros');
  t.equal(formatDec('0.5'), '0.5', 'not a scaled integer: passed through');
});

t.test('parseDec reads decimal text into the scaled integer; bad text is refused', async (t) => {
  t.equal(parseDec('0.1'), '100000000000000000');
  t.equal(parseDec('12'), '12000000000000000000');
  t.equal(parseDec('-0.05'), '-50000000000000000');
  t.equal(parseDec('-0'), '0');
  t.throws(() => parseDec('0.1234567890123456789'), /at most 18 fraction digits/);
  t.throws(() => parseDec('1e5'));
});

t.test('parseDec(formatDec(x)) is x for any scaled integer', async () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }),
      (value) => parseDec(formatDec(String(value))) === String(value),
    ),
  );
});

t.test(
  'options in a FileDescriptorProto built by hand (as the protobuf compiler writes them) reach the JSON',
  async (t) => {
    const TYPE_STRING = 9;
    const TYPE_MESSAGE = 11;
    const OPTIONAL = 1;
    const field = (name: string, number: number, type: number, options: Buffer[], typeName?: string) =>
      msg(
        2,
        bytes(1, name),
        num(3, number),
        num(4, OPTIONAL),
        num(5, type),
        ...(typeName ? [bytes(6, typeName)] : []),
        ...(options.length ? [msg(8, ...options)] : []),
      );
    const file = message(
      bytes(1, 'test/dec.proto'),
      bytes(2, 'test.dec'),
      msg(
        4,
        bytes(1, 'Rates'),
        // (gogoproto.customtype) = 65003, (gogoproto.nullable) = 65001, plus an option the gateway does not know (amino 11110005).
        field('rate', 1, TYPE_STRING, [
          bytes(65003, 'cosmossdk.io/math.LegacyDec'),
          num(65001, false),
          num(11110005, true),
        ]),
        field('maybe', 2, TYPE_STRING, [bytes(65003, 'cosmossdk.io/math.LegacyDec')]),
        field('plain', 3, TYPE_STRING, []),
        field('inner', 4, TYPE_MESSAGE, [num(65001, false)], '.test.dec.Inner'),
      ),
      msg(4, bytes(1, 'Inner'), field('amount', 1, TYPE_STRING, [bytes(65003, 'Int'), num(65001, false)])),
      bytes(12, 'proto3'),
    );
    const schema = schemaFromFileDescriptors([file]);
    const Rates = schema.root.lookupType('test.dec.Rates');
    const json = new CosmosJson(schema.root);
    const render = (wire: Buffer) => json.stringify(Rates, Rates.decode(wire));
    t.equal(render(message()), '{"rate":"0.000000000000000000","maybe":null,"plain":"","inner":{"amount":"0"}}');
    t.equal(
      render(message(bytes(1, '250000000000000000'), bytes(2, '1'), bytes(3, '7'), msg(4, bytes(1, '42')))),
      '{"rate":"0.250000000000000000","maybe":"0.000000000000000001","plain":"7","inner":{"amount":"42"}}',
    );
  },
);
