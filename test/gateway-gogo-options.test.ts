// LegacyDec text both ways: the scaled integer on the wire <-> the 18-decimal text of a node's REST
// (cosmossdk.io/math LegacyDec.String()), and the local node's fixture parsing.
import t from 'tap';
import fc from 'fast-check';
import { formatDec, parseDec } from '../dist/src/gateway/gogo-options.js';

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
    fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), (value) => parseDec(formatDec(String(value))) === String(value)),
  );
});
