// Thread: main
// ixo.bonds.v1beta1.Query over the sample data, prices computed from the bond's curve as the chain's
// keeper/grpc_query.go does (maths in bond-curves.ts). An unknown bond is NOT_FOUND.
import { found, required, type Message, type QueryHandler } from '../query-handler.js';
import type { ChainState } from '../state.js';
import {
  bondErrors,
  capped,
  feesOf,
  minus,
  parseBondAmount,
  parseCoin,
  plus,
  pricesAtSupply,
  pricesToMint,
  returnsForBurn,
  returnsForSwap,
  roundedDown,
  roundedUp,
  type Coin,
  type DecCoin,
} from './bond-curves.js';
import { decOfInt, decOfWire, quoInt, ZERO } from './legacy-dec.js';

const bondOf = (state: ChainState, bondDid: string) => found(state, 'bond', bondDid, 'bond');

/** A query answered from the bond record. */
const fromBond =
  (answer: (bond: Message, state: ChainState, request: Message) => Message): QueryHandler =>
  (request, state) => {
    required(request, 'bond_did');
    return answer(bondOf(state, request.bond_did), state, request);
  };

/** A bond query with a `bond_amount` of the bond's token. */
const withAmount =
  (answer: (bond: Message, amount: bigint, state: ChainState) => Message): QueryHandler =>
  (request, state) => {
    required(request, 'bond_did');
    const bond = bondOf(state, request.bond_did);
    return answer(bond, parseBondAmount(request.bond_amount ?? '', bond.token), state);
  };

/** The chain answers zeros in every reserve token rather than an empty list (zeroReserveTokensIfEmpty). */
const zeroIfEmpty = (bond: Message, list: Coin[]): Coin[] =>
  list.length ? list : [...(bond.reserve_tokens as string[])].sort().map((denom) => ({ denom, amount: '0' }));

const reserveOf = (bond: Message): Coin[] => bond.current_reserve ?? [];

/** GetCurrentPricesPT: the spot price; for a swapper, the price of minting one token. */
const currentPrices = (bond: Message): DecCoin[] =>
  bond.function_type === 'swapper_function'
    ? pricesToMint(bond, 1n, reserveOf(bond))
    : pricesAtSupply(bond, BigInt(bond.current_supply.amount));

/** The bond's supply with the current batch's buys added (sign 1) or sells taken off (sign -1). */
function adjustedSupply(bond: Message, state: ChainState, sign: 1n | -1n): Coin {
  const batch = state.get('batch', bond.bond_did);
  const pending = BigInt((sign === 1n ? batch?.total_buy_amount : batch?.total_sell_amount)?.amount ?? 0);
  return { denom: bond.token, amount: (BigInt(bond.current_supply.amount) + sign * pending).toString() };
}

export const bondsQueries: Record<string, QueryHandler> = {
  Bonds: (_request, state) => ({ bonds: state.filter('bond', () => true).map((bond) => bond.bond_did) }),
  BondsDetailed: (_request, state) => ({
    bonds_detailed: state
      .filter('bond', () => true)
      .map((bond) => {
        let spotPrice: DecCoin[] = [];
        try {
          spotPrice = currentPrices(bond);
        } catch {
          // the chain ignores a price error here and shows zeros
        }
        return {
          bond_did: bond.bond_did,
          spot_price: zeroIfEmpty(bond, spotPrice),
          supply: bond.current_supply,
          reserve: reserveOf(bond),
        };
      }),
  }),
  Params: (_request, state) => ({ params: state.get('bondsParams') }),
  Bond: fromBond((bond) => ({ bond })),
  Batch: fromBond((bond, state) => ({ batch: found(state, 'batch', bond.bond_did, 'batch') })),
  LastBatch: fromBond((bond, state) => ({ last_batch: found(state, 'lastBatch', bond.bond_did, 'last batch') })),
  CurrentPrice: fromBond((bond) => ({ current_price: zeroIfEmpty(bond, currentPrices(bond)) })),
  CurrentReserve: fromBond((bond) => ({ current_reserve: zeroIfEmpty(bond, reserveOf(bond)) })),
  AvailableReserve: fromBond((bond) => ({ available_reserve: zeroIfEmpty(bond, bond.available_reserve ?? []) })),
  CustomPrice: withAmount((bond, amount) => ({ price: zeroIfEmpty(bond, pricesAtSupply(bond, amount)) })),
  BuyPrice: withAmount((bond, amount, state) => {
    const adjusted = adjustedSupply(bond, state, 1n);
    if (BigInt(bond.max_supply.amount) < BigInt(adjusted.amount) + amount) throw bondErrors.maxSupply();
    const prices = pricesToMint(bond, amount, reserveOf(bond));
    const rounded = roundedUp(prices);
    const txFees = feesOf(prices, decOfWire(bond.tx_fee_percentage));
    return {
      adjusted_supply: adjusted,
      prices: zeroIfEmpty(bond, rounded),
      tx_fees: zeroIfEmpty(bond, txFees),
      total_prices: zeroIfEmpty(bond, plus(rounded, txFees)),
      total_fees: zeroIfEmpty(bond, txFees),
    };
  }),
  SellReturn: withAmount((bond, amount, state) => {
    if (!bond.allow_sells) throw bondErrors.noSelling();
    const adjusted = adjustedSupply(bond, state, -1n);
    if (BigInt(adjusted.amount) < amount) throw bondErrors.burnMoreThanSupply();
    const returns = returnsForBurn(bond, amount, reserveOf(bond));
    const rounded = roundedDown(returns);
    const txFees = feesOf(returns, decOfWire(bond.tx_fee_percentage));
    const exitFees = feesOf(returns, decOfWire(bond.exit_fee_percentage));
    const totalFees = capped(plus(txFees, exitFees), rounded);
    return {
      adjusted_supply: adjusted,
      returns: zeroIfEmpty(bond, rounded),
      tx_fees: zeroIfEmpty(bond, txFees),
      exit_fees: zeroIfEmpty(bond, exitFees),
      total_returns: zeroIfEmpty(bond, minus(rounded, totalFees)),
      total_fees: zeroIfEmpty(bond, totalFees),
    };
  }),
  SwapReturn: (request, state) => {
    const from = parseCoin(request.from_token_with_amount ?? '');
    required(request, 'bond_did');
    const bond = bondOf(state, request.bond_did);
    const { returns, fee } = returnsForSwap(bond, from, request.to_token ?? '', reserveOf(bond));
    return { total_fees: [fee], total_returns: returns };
  },
  AlphaMaximums: fromBond((bond) => {
    if (bond.function_type !== 'augmented_function') throw bondErrors.notForFunctionType(bond.function_type);
    if (!bond.alpha_bond) throw bondErrors.notForFunctionType('bond is not an alpha bond');
    const reserve = reserveOf(bond);
    if (!reserve.length) return { max_system_alpha_increase: '0', max_system_alpha: '0' };
    const outcomePayment = BigInt(bond.outcome_payment || '0');
    if (outcomePayment === 0n) throw bondErrors.overflow(new RangeError('division by zero'));
    const I0 = (bond.function_parameters as Message[]).find((p) => p.param === 'I0')?.value;
    return {
      max_system_alpha_increase: quoInt(decOfInt(reserve[0].amount), outcomePayment).toString(),
      max_system_alpha: quoInt(I0 === undefined ? ZERO : decOfWire(I0), outcomePayment).toString(),
    };
  }),
};
