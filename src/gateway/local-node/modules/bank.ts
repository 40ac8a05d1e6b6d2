// Thread: main
// cosmos.bank.v1beta1.Query over the sample balances: an unknown address holds nothing (as on a chain),
// the supply is the sum of the balances.
import { found, nodeErrors, pageOf, required, type Message, type QueryHandler } from '../query-handler.js';
import { paginate } from '../pagination.js';
import type { ChainState } from '../state.js';

const coinsOf = (state: ChainState, address: string): Message[] => state.get('balance', address)?.coins ?? [];

function supply(state: ChainState): Map<string, bigint> {
  const totals = new Map<string, bigint>();
  for (const { coins } of state.filter('balance', () => true)) {
    for (const coin of coins as Message[])
      totals.set(coin.denom, (totals.get(coin.denom) ?? 0n) + BigInt(coin.amount || '0'));
  }
  return new Map([...totals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The coins of an address as a page (the chain pages balances by denom). */
const balancesPage: QueryHandler = (request, state) => {
  required(request, 'address');
  const coins = coinsOf(state, request.address);
  const page = pageOf(() => paginate((start, reverse) => pageSource(coins, start, reverse), request.pagination));
  return { balances: page.items, pagination: page.pagination };
};

/** Coins keyed by denom, in key order, for paginate(). */
function* pageSource(
  coins: Message[],
  start: string | undefined,
  reverse: boolean,
): Generator<{ key: string; value: Message }> {
  const sorted = [...coins].sort((a, b) => (a.denom < b.denom ? -1 : a.denom > b.denom ? 1 : 0));
  if (reverse) sorted.reverse();
  for (const coin of sorted) {
    if (start !== undefined && (reverse ? coin.denom > start : coin.denom < start)) continue;
    yield { key: coin.denom, value: coin };
  }
}

const balanceOf: QueryHandler = (request, state) => {
  required(request, 'address');
  if (!request.denom) throw nodeErrors.invalidArgument('invalid denom');
  const coin = coinsOf(state, request.address).find((c) => c.denom === request.denom);
  return { balance: { denom: request.denom, amount: coin?.amount ?? '0' } };
};

export const bankQueries: Record<string, QueryHandler> = {
  Balance: balanceOf,
  AllBalances: balancesPage,
  SpendableBalances: balancesPage,
  SpendableBalanceByDenom: balanceOf,
  TotalSupply: (request, state) => {
    const coins = [...supply(state)].map(([denom, amount]) => ({ denom, amount: String(amount) }));
    const page = pageOf(() => paginate((start, reverse) => pageSource(coins, start, reverse), request.pagination));
    return { supply: page.items, pagination: page.pagination };
  },
  SupplyOf: (request, state) => {
    if (!request.denom) throw nodeErrors.invalidArgument('invalid denom');
    return { amount: { denom: request.denom, amount: String(supply(state).get(request.denom) ?? 0n) } };
  },
  Params: (_request, state) => ({ params: found(state, 'bankParams', '', 'bank params') }),
};
