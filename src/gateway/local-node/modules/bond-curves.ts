// Thread: main
// The bonding-curve maths of the ixo chain's x/bonds module, re-written from its Go source at
// ixofoundation/ixo-blockchain@bfdd934456be01f9212d3ebc107df81b43e1566d (v8): x/bonds/types/bonds.go
// (GetPricesAtSupply, ReserveAtSupply, GetPricesToMint, GetReturnsForBurn, GetReturnsForSwap, fees),
// types/augmented.go (Reserve, SpotPrice), types/util.go (rounding, AdjustFees) and keeper/grpc_query.go.
// Records are in wire form: LegacyDec values (DecCoin amounts too) are scaled integer strings.
//
// Errors: the chain answers its module errors with gRPC code UNKNOWN (HTTP 500); here bad input is
// INVALID_ARGUMENT and a refusal by the bond's state FAILED_PRECONDITION, so no client input earns a 5xx,
// with the chain's messages.
import { status } from '@grpc/grpc-js';
import { NodeError, type Message } from '../query-handler.js';
import {
  ceilInt,
  decOfInt,
  decOfWire,
  mul,
  ONE,
  power,
  quo,
  quoInt,
  truncateInt,
  ZERO,
  type Dec,
} from './legacy-dec.js';

export interface Coin {
  denom: string;
  amount: string;
}
/** A DecCoin in wire form (amount scaled by 10^18). */
export type DecCoin = Coin;

const refused = (message: string) => new NodeError(status.FAILED_PRECONDITION, message);
export const bondErrors = {
  notForFunctionType: (detail?: string) =>
    refused(
      detail
        ? `${detail}: function is not available for the function type`
        : 'function is not available for the function type',
    ),
  invalidState: () => refused('cannot perform that action at the current state'),
  needsSupply: () => refused('function requires the current supply to be non zero'),
  notReserveToken: (denom: string) =>
    new NodeError(status.INVALID_ARGUMENT, `${denom}: token is not a valid reserve token`),
  maxSupply: () => refused('cannot mint more tokens than the max supply'),
  burnMoreThanSupply: () => refused('cannot burn more tokens than the current supply'),
  noSelling: () => refused('bond does not allow selling at the moment'),
  swapTooSmall: () => refused('swap amount too small to give any return'),
  reserveDepletion: () => refused('swap amount too large and causes reserve to be depleted'),
  reserveShort: () => refused('not enough reserve available for burn'),
  overflow: (error: unknown) => refused(`${(error as Error).message}: numeric overflow`),
};

// sdk.ParseDecCoin's expression: an amount, optional spaces, a denom.
const COIN = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z][a-zA-Z0-9/:._-]{2,127})$/;

/** sdk.ParseCoinNormalized: a (decimal) coin expression, its amount truncated to an integer. */
export function parseCoin(text: string): { denom: string; amount: bigint } {
  const trimmed = text.trim();
  const match = COIN.exec(trimmed);
  if (!match) throw new NodeError(status.INVALID_ARGUMENT, `invalid decimal coin expression: ${trimmed}`);
  if ((match[1].split('.')[1] ?? '').length > 18)
    throw new NodeError(
      status.INVALID_ARGUMENT,
      `failed to parse decimal coin amount: ${match[1]}: too many decimal places`,
    );
  return { denom: match[2], amount: BigInt(match[1].split('.')[0] || '0') };
}

/** client.ParseTwoPartCoin: `amount` followed by the bond's token must be a coin of that token. */
export function parseBondAmount(amount: string, token: string): bigint {
  const coin = parseCoin(amount + token);
  if (coin.denom !== token) throw new NodeError(status.INVALID_ARGUMENT, `${token}: invalid coins`);
  return coin.amount;
}

const paramsOf = (bond: Message): Map<string, Dec> =>
  new Map((bond.function_parameters ?? []).map((p: Message) => [p.param, decOfWire(p.value)]));
const param = (params: Map<string, Dec>, name: string): Dec => params.get(name) ?? ZERO;

/** The same amount in every reserve token (GetNewReserveDecCoins): zero amounts drop out, as in sdk.DecCoins.Add. */
const reserveDecCoins = (bond: Message, amount: Dec): DecCoin[] =>
  amount === ZERO
    ? []
    : [...(bond.reserve_tokens as string[])].sort().map((denom) => ({ denom, amount: amount.toString() }));

const withMathErrors = <T>(compute: () => T): T => {
  try {
    return compute();
  } catch (error) {
    if (error instanceof RangeError) throw bondErrors.overflow(error);
    throw error;
  }
};

const root = (d: Dec, n: Dec) => power(d, quo(ONE, n));
/** Augmented curve: reserve at supply S (Reserve) and spot price at reserve R (SpotPrice). */
const augmentedReserve = (S: Dec, kappa: Dec, V0: Dec) => quo(power(S, kappa), V0);
const augmentedSpotPrice = (R: Dec, kappa: Dec, V0: Dec) =>
  quo(mul(kappa, root(power(R, kappa - ONE), kappa)), root(V0, kappa));

/** The spot price per bond token at `supply` (GetPricesAtSupply). */
export function pricesAtSupply(bond: Message, supply: bigint): DecCoin[] {
  const args = paramsOf(bond);
  const x = decOfInt(supply);
  return withMathErrors(() => {
    switch (bond.function_type) {
      case 'power_function':
        return reserveDecCoins(bond, mul(power(x, param(args, 'n')), param(args, 'm')) + param(args, 'c'));
      case 'sigmoid_function': {
        const [a, b, c] = ['a', 'b', 'c'].map((name) => param(args, name));
        const shifted = x - b;
        return reserveDecCoins(bond, mul(a, quo(shifted, root(mul(shifted, shifted) + c, decOfInt(2))) + ONE));
      }
      case 'augmented_function': {
        if (bond.state === 'HATCH') return reserveDecCoins(bond, param(args, 'p0'));
        if (bond.state !== 'OPEN') throw bondErrors.invalidState();
        const kappa = param(args, 'kappa');
        const V0 = param(args, 'V0');
        const reserve = augmentedReserve(x, kappa, V0);
        return reserveDecCoins(bond, reserve < ONE ? ZERO : augmentedSpotPrice(reserve, kappa, V0));
      }
      default:
        throw bondErrors.notForFunctionType();
    }
  });
}

/** The reserve the curve holds at `supply` (ReserveAtSupply): the integral of the price. */
export function reserveAtSupply(bond: Message, supply: bigint): Dec {
  const args = paramsOf(bond);
  const x = decOfInt(supply);
  return withMathErrors(() => {
    switch (bond.function_type) {
      case 'power_function': {
        const n1 = param(args, 'n') + ONE;
        return quo(mul(power(x, n1), param(args, 'm')), n1) + mul(x, param(args, 'c'));
      }
      case 'sigmoid_function': {
        const [a, b, c] = ['a', 'b', 'c'].map((name) => param(args, name));
        const two = decOfInt(2);
        const shifted = x - b;
        return mul(a, root(mul(shifted, shifted) + c, two) + x) - mul(a, root(mul(b, b) + c, two));
      }
      case 'augmented_function':
        return augmentedReserve(x, param(args, 'kappa'), param(args, 'V0'));
      default:
        throw bondErrors.notForFunctionType();
    }
  });
}

const firstReserve = (reserve: Coin[]): Dec => (reserve.length ? decOfInt(reserve[0].amount) : ZERO);
const amountOf = (coins: Coin[], denom: string): bigint => BigInt(coins.find((c) => c.denom === denom)?.amount ?? 0);

/** Swapper: each reserve's share of `delta` bond tokens (GetReserveDeltaForLiquidityDelta). */
function swapperShare(bond: Message, delta: bigint, reserve: Coin[]): DecCoin[] {
  const alpha = quo(decOfInt(delta), decOfInt(bond.current_supply.amount));
  return (bond.reserve_tokens as string[])
    .slice(0, 2)
    .map((denom) => ({ denom, amount: mul(alpha, decOfInt(amountOf(reserve, denom))).toString() }));
}

/** What minting `mint` bond tokens costs in each reserve token, before fees (GetPricesToMint). */
export function pricesToMint(bond: Message, mint: bigint, reserve: Coin[]): DecCoin[] {
  if (bond.function_type === 'augmented_function' && bond.state === 'HATCH')
    return reserveDecCoins(bond, mul(param(paramsOf(bond), 'p0'), decOfInt(mint)));
  if (bond.function_type === 'swapper_function') {
    if (BigInt(bond.current_supply.amount) === 0n) throw bondErrors.needsSupply();
    return swapperShare(bond, mint, reserve);
  }
  const price = reserveAtSupply(bond, BigInt(bond.current_supply.amount) + mint) - firstReserve(reserve);
  return reserveDecCoins(bond, price < ZERO ? ONE : price);
}

/** What burning `burn` bond tokens returns in each reserve token, before fees (GetReturnsForBurn). */
export function returnsForBurn(bond: Message, burn: bigint, reserve: Coin[]): DecCoin[] {
  if (bond.function_type === 'swapper_function') return swapperShare(bond, burn, reserve);
  const left = reserveAtSupply(bond, BigInt(bond.current_supply.amount) - burn);
  const balance = firstReserve(reserve);
  if (left > balance) throw bondErrors.reserveShort();
  return reserveDecCoins(bond, balance - left);
}

/** The percentage fee on one amount, rounded up (GetFee). */
export const feeOf = (amount: Dec, percentage: Dec): bigint => ceilInt(mul(quoInt(percentage, 100n), amount));

/** sdk.Coins: sorted by denom, zero amounts dropped, a denom's amounts summed. */
export function coins(list: { denom: string; amount: bigint }[]): Coin[] {
  const sums = new Map<string, bigint>();
  for (const { denom, amount } of list) sums.set(denom, (sums.get(denom) ?? 0n) + amount);
  return [...sums]
    .filter(([, amount]) => amount !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([denom, amount]) => ({ denom, amount: amount.toString() }));
}

const asInts = (list: Coin[]) => list.map((c) => ({ denom: c.denom, amount: BigInt(c.amount) }));
export const feesOf = (amounts: DecCoin[], percentage: Dec): Coin[] =>
  coins(amounts.map((a) => ({ denom: a.denom, amount: feeOf(decOfWire(a.amount), percentage) })));
/** Prices are rounded up, returns down (RoundReservePrices / RoundReserveReturns). */
export const roundedUp = (amounts: DecCoin[]) =>
  coins(amounts.map((a) => ({ denom: a.denom, amount: ceilInt(decOfWire(a.amount)) })));
export const roundedDown = (amounts: DecCoin[]) =>
  coins(amounts.map((a) => ({ denom: a.denom, amount: truncateInt(decOfWire(a.amount)) })));
export const plus = (a: Coin[], b: Coin[]) => coins([...asInts(a), ...asInts(b)]);
export const minus = (a: Coin[], b: Coin[]) =>
  coins([...asInts(a), ...asInts(b).map((c) => ({ denom: c.denom, amount: -c.amount }))]);
const minBig = (a: bigint, b: bigint) => (a < b ? a : b);

/** Fees capped at what they are taken from, per denom (AdjustFees). */
export const capped = (fees: Coin[], max: Coin[]) =>
  coins(asInts(fees).map((f) => ({ denom: f.denom, amount: minBig(f.amount, amountOf(max, f.denom)) })));

/** Swapper: what `from` returns in `toToken`, and the tx fee taken from it (GetReturnsForSwap). */
export function returnsForSwap(
  bond: Message,
  from: { denom: string; amount: bigint },
  toToken: string,
  reserve: Coin[],
): { returns: Coin[]; fee: Coin } {
  if (bond.function_type !== 'swapper_function') throw bondErrors.notForFunctionType();
  const tokens = (bond.reserve_tokens as string[]).slice(0, 2);
  for (const denom of [from.denom, toToken]) if (!tokens.includes(denom)) throw bondErrors.notReserveToken(denom);
  const fee = feeOf(decOfInt(from.amount), decOfWire(bond.tx_fee_percentage));
  const input = from.amount - fee;
  if (input === 0n) throw bondErrors.swapTooSmall();
  const outReserve = amountOf(reserve, toToken);
  const out = (input * outReserve) / (amountOf(reserve, from.denom) + input);
  if (out === 0n || out === outReserve) throw bondErrors.reserveDepletion();
  return { returns: [{ denom: toToken, amount: out.toString() }], fee: { denom: from.denom, amount: fee.toString() } };
}
