// ixo.bonds.v1beta1.Query over the sample data. Prices come from the bond's current batch; the curve
// computations (custom, buy, sell and swap prices, alpha maximums) are not modelled: for a known bond they
// answer UNIMPLEMENTED, for an unknown one NOT_FOUND as a node does.
import { status } from '@grpc/grpc-js';
import { found, NodeError, required, type Message, type QueryHandler } from '../query-handler.js';
import type { ChainState } from '../state.js';

const bondOf = (state: ChainState, bondDid: string) => found(state, 'bond', bondDid, 'bond');

/** A query answered from the bond record. */
const fromBond =
  (answer: (bond: Message, state: ChainState) => Message): QueryHandler =>
  (request, state) => {
    required(request, 'bond_did');
    return answer(bondOf(state, request.bond_did), state);
  };

const spotPrice = (state: ChainState, bondDid: string): Message[] => state.get('batch', bondDid)?.buy_prices ?? [];

const curve: QueryHandler = (request, state) => {
  required(request, 'bond_did');
  bondOf(state, request.bond_did);
  throw new NodeError(status.UNIMPLEMENTED, 'the embedded query node does not compute bonding curve prices');
};

export const bondsQueries: Record<string, QueryHandler> = {
  Bonds: (_request, state) => ({ bonds: state.filter('bond', () => true).map((bond) => bond.bond_did) }),
  BondsDetailed: (_request, state) => ({
    bonds_detailed: state.filter('bond', () => true).map((bond) => ({
      bond_did: bond.bond_did,
      spot_price: spotPrice(state, bond.bond_did),
      supply: bond.current_supply,
      reserve: bond.current_reserve,
    })),
  }),
  Params: (_request, state) => ({ params: state.get('bondsParams') }),
  Bond: fromBond((bond) => ({ bond })),
  Batch: fromBond((bond, state) => ({ batch: found(state, 'batch', bond.bond_did, 'batch') })),
  LastBatch: fromBond((bond, state) => ({ last_batch: found(state, 'lastBatch', bond.bond_did, 'last batch') })),
  CurrentPrice: fromBond((bond, state) => ({ current_price: spotPrice(state, bond.bond_did) })),
  CurrentReserve: fromBond((bond) => ({ current_reserve: bond.current_reserve })),
  AvailableReserve: fromBond((bond) => ({ available_reserve: bond.available_reserve })),
  CustomPrice: curve,
  BuyPrice: curve,
  SellReturn: curve,
  SwapReturn: curve,
  AlphaMaximums: curve,
};
