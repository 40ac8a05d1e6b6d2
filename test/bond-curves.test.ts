// Unit tests of the bonding-curve maths (src/gateway/local-node/modules/bond-curves.ts) against values
// worked out by hand.
import t from 'tap';
import {
  capped,
  feeOf,
  parseCoin,
  pricesAtSupply,
  pricesToMint,
  reserveAtSupply,
  returnsForBurn,
  returnsForSwap,
} from '../dist/src/gateway/local-node/modules/bond-curves.js';
import { ceilInt, decOfInt, mul, power, quo } from '../dist/src/gateway/local-node/modules/legacy-dec.js';

const E18 = 10n ** 18n;
const dec = (text: string) => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole + fraction.padEnd(18, '0'));
};
const params = (values: Record<string, string>) =>
  Object.entries(values).map(([param, value]) => ({ param, value: dec(value).toString() }));
const bond = (fields: Record<string, any>) => ({
  reserve_tokens: ['uixo'],
  state: 'OPEN',
  tx_fee_percentage: dec('0.5').toString(),
  ...fields,
});
const near = (t: any, actual: bigint, expected: number, digits: number, what: string) =>
  t.ok(Math.abs(Number(actual) / 1e18 - expected) < 10 ** -digits, `${what}: ${Number(actual) / 1e18} ≈ ${expected}`);

t.test('LegacyDec rounding: half to even on mul and quo, ceil', async (t) => {
  t.equal(mul(dec('0.000000000000000001'), dec('0.5')), 0n, '0.5e-18 rounds to even 0');
  t.equal(mul(dec('0.000000000000000003'), dec('0.5')), 2n, '1.5e-18 rounds to even 2');
  t.equal(quo(decOfInt(1), decOfInt(3)), dec('0.333333333333333333'));
  t.equal(quo(decOfInt(2), decOfInt(3)), dec('0.666666666666666667'));
  t.equal(ceilInt(dec('2.000000000000000001')), 3n);
  t.equal(ceilInt(decOfInt(2)), 2n);
  t.equal(power(decOfInt(2510), decOfInt(3)), decOfInt(15813251000n), 'whole exponents are exact');
  near(t, power(decOfInt(2), dec('0.5')), Math.SQRT2, 15, 'square root');
});

t.test('power function: price 12x^2 + 100, reserve 4x^3 + 100x', async (t) => {
  const curve = bond({
    function_type: 'power_function',
    function_parameters: params({ m: '12', n: '2', c: '100' }),
    current_supply: { amount: '2500' },
  });
  t.same(pricesAtSupply(curve, 2500n), [{ denom: 'uixo', amount: decOfInt(75000100).toString() }]);
  t.equal(reserveAtSupply(curve, 2500n), decOfInt(62500250000n));
  t.same(pricesToMint(curve, 10n, [{ denom: 'uixo', amount: '62500250000' }]), [
    { denom: 'uixo', amount: decOfInt(753005000).toString() },
  ]);
  t.same(returnsForBurn(curve, 10n, [{ denom: 'uixo', amount: '62500250000' }]), [
    { denom: 'uixo', amount: decOfInt(747005000).toString() },
  ]);
  t.same(
    pricesToMint(curve, 10n, [{ denom: 'uixo', amount: '99999999999999' }]),
    [{ denom: 'uixo', amount: E18.toString() }],
    'a reserve above the curve: price 1',
  );
  t.throws(() => returnsForBurn(curve, 10n, [{ denom: 'uixo', amount: '5' }]), {
    message: 'not enough reserve available for burn',
  });
});

t.test('sigmoid function: price a((x-b)/sqrt((x-b)^2+c) + 1)', async (t) => {
  const curve = bond({ function_type: 'sigmoid_function', function_parameters: params({ a: '2', b: '10', c: '1' }) });
  t.same(pricesAtSupply(curve, 10n), [{ denom: 'uixo', amount: decOfInt(2).toString() }], 'at x = b the price is a');
  near(t, BigInt(pricesAtSupply(curve, 20n)[0].amount), 2 * (10 / Math.sqrt(101) + 1), 12, 'price at 20');
  near(t, reserveAtSupply(curve, 10n), 2 * (1 + 10) - 2 * Math.sqrt(101), 12, 'reserve at 10');
});

t.test('augmented function: p0 while hatching, then kappa S^(kappa-1)/V0-based spot price', async (t) => {
  const fields = {
    function_type: 'augmented_function',
    function_parameters: params({ p0: '1', kappa: '3', V0: '1000000000000' }),
  };
  t.same(pricesAtSupply(bond({ ...fields, state: 'HATCH' }), 5n), [{ denom: 'uixo', amount: E18.toString() }]);
  t.same(pricesToMint(bond({ ...fields, state: 'HATCH' }), 7n, []), [
    { denom: 'uixo', amount: decOfInt(7).toString() },
  ]);
  const open = bond(fields);
  t.equal(reserveAtSupply(open, 2000000n), decOfInt(8000000), 'R = S^3 / V0');
  // R = 8e6: kappa * (R^2)^(1/3) / V0^(1/3) = 3 * 4e4 / 1e4 = 12
  near(t, BigInt(pricesAtSupply(open, 2000000n)[0].amount), 12, 9, 'spot price');
  t.same(pricesAtSupply(open, 1n), [], 'a reserve below 1: price 0');
  t.throws(() => pricesAtSupply(bond({ ...fields, state: 'SETTLE' }), 1n), {
    message: 'cannot perform that action at the current state',
  });
});

t.test('swapper: reserve shares, constant-product swap, fees', async (t) => {
  const pool = bond({
    function_type: 'swapper_function',
    reserve_tokens: ['uixo', 'xusd'],
    current_supply: { amount: '1000' },
    tx_fee_percentage: dec('0.3').toString(),
  });
  const reserve = [
    { denom: 'uixo', amount: '2000000' },
    { denom: 'xusd', amount: '1000000' },
  ];
  t.same(pricesToMint(pool, 10n, reserve), [
    { denom: 'uixo', amount: decOfInt(20000).toString() },
    { denom: 'xusd', amount: decOfInt(10000).toString() },
  ]);
  // fee ceil(0.3% of 10000) = 30; out = 9970 * 1e6 / (2e6 + 9970) = 4960.27 -> 4960
  t.same(returnsForSwap(pool, { denom: 'uixo', amount: 10000n }, 'xusd', reserve), {
    returns: [{ denom: 'xusd', amount: '4960' }],
    fee: { denom: 'uixo', amount: '30' },
  });
  t.throws(
    () =>
      returnsForSwap(pool, { denom: 'uixo', amount: 10n ** 15n }, 'xusd', [
        { denom: 'uixo', amount: '1' },
        { denom: 'xusd', amount: '1' },
      ]),
    { message: /reserve to be depleted/ },
  );
  t.throws(() => pricesToMint({ ...pool, current_supply: { amount: '0' } }, 1n, reserve), {
    message: /current supply to be non zero/,
  });
  t.equal(feeOf(decOfInt(1), dec('0.3')), 1n, 'fees round up');
  t.same(capped([{ denom: 'uixo', amount: '12' }], [{ denom: 'uixo', amount: '10' }]), [
    { denom: 'uixo', amount: '10' },
  ]);
});

t.test('coin expressions as sdk.ParseCoinNormalized reads them', async (t) => {
  t.same(parseCoin('10.9uixo'), { denom: 'uixo', amount: 10n }, 'decimals truncated');
  t.same(parseCoin(' 5 ibc/ABC'), { denom: 'ibc/ABC', amount: 5n });
  for (const bad of ['uixo', '10u', '-1uixo', '1.uixo'])
    t.throws(() => parseCoin(bad), { message: `invalid decimal coin expression: ${bad}` }, bad);
  t.throws(
    () => parseCoin(`1.${'1'.repeat(19)}uixo`),
    { message: /failed to parse decimal coin amount/ },
    'more than 18 decimals',
  );
});
