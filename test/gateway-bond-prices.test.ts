// The embedded query node's bonding-curve queries over HTTP, with the values worked out by hand from the
// sample bonds (fixtures/gateway-local-node.json):
// - xusd, power function p(x) = 12x^2 + 100, reserve(x) = 4x^3 + 100x, supply 2500, reserve 62 500 250 000
//   uixo, tx fee 0.5 %, exit fee 0.1 %, 10 xusd pending buys, max supply 1 000 000;
// - cookstove, augmented alpha bond in HATCH, p0 = 1, reserve 2500, outcome payment 1e8, I0 = 5e7;
// - uixoxusd, swapper over 2 000 000 uixo + 1 000 000 xusd, supply 1000, tx fee 0.3 %.
import t from 'tap';
import { startTestServer } from './helpers/server.js';

const POWER = 'did:ixo:entity:7a1c3e5f9b2d4f6a8c0e2b4d6f8a0c2e';
const ALPHA = 'did:ixo:entity:3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e';
const POOL = 'did:ixo:entity:5d2b4f6a8c0e1a3c5e7f9b1d3f5a7c9e';
const coin = (denom: string, amount: string) => ({ denom, amount });

t.test('bond prices through the gateway over the embedded node', async (t) => {
  const server = await startTestServer(t);
  const get = async (path: string) => {
    const res = await fetch(server.url + path);
    return { status: res.status, body: (await res.json()) as any };
  };
  const expectError = async (path: string, status: number, code: number, message: string) => {
    const answer = await get(path);
    t.equal(answer.status, status, path);
    t.same(answer.body, { code, message, details: [] }, path);
  };

  t.test('current and custom prices are DecCoins with 18 decimals', async (t) => {
    t.same((await get(`/ixo/bonds/${POWER}/current_price`)).body, {
      current_price: [coin('uixo', '75000100.000000000000000000')],
    });
    t.same((await get(`/ixo/bonds/${POWER}/price/1000`)).body, {
      price: [coin('uixo', '12000100.000000000000000000')],
    });
    t.same((await get(`/ixo/bonds/${POWER}/price/0`)).body, { price: [coin('uixo', '100.000000000000000000')] });
    t.same((await get(`/ixo/bonds/${ALPHA}/current_price`)).body, {
      current_price: [coin('uixo', '1.000000000000000000')],
    });
    t.same((await get(`/ixo/bonds/${POOL}/current_price`)).body, {
      current_price: [coin('uixo', '2000.000000000000000000'), coin('xusd', '1000.000000000000000000')],
    });
    const detailed = (await get('/ixo/bonds/bonds_detailed')).body.bonds_detailed;
    t.same(
      detailed.map((bond: any) => bond.spot_price[0].amount),
      ['1.000000000000000000', '2000.000000000000000000', '75000100.000000000000000000'],
    );
  });

  t.test('buy price: curve integral minus the reserve, tx fee rounded up, supply with pending buys', async (t) => {
    t.same((await get(`/ixo/bonds/${POWER}/buy_price/10`)).body, {
      adjusted_supply: coin('xusd', '2510'),
      prices: [coin('uixo', '753005000')],
      tx_fees: [coin('uixo', '3765025')],
      total_prices: [coin('uixo', '756770025')],
      total_fees: [coin('uixo', '3765025')],
    });
    const hatch = (await get(`/ixo/bonds/${ALPHA}/buy_price/10`)).body;
    t.same(
      [hatch.prices, hatch.tx_fees, hatch.total_prices],
      [[coin('uixo', '10')], [coin('uixo', '1')], [coin('uixo', '11')]],
    );
    const pool = (await get(`/ixo/bonds/${POOL}/buy_price/10`)).body;
    t.same(pool.prices, [coin('uixo', '20000'), coin('xusd', '10000')]);
    t.same(pool.total_prices, [coin('uixo', '20060'), coin('xusd', '10030')]);
    t.equal((await get(`/ixo/bonds/${POWER}/buy_price/997490`)).status, 200);
    await expectError(`/ixo/bonds/${POWER}/buy_price/997491`, 400, 9, 'cannot mint more tokens than the max supply');
  });

  t.test('sell return: reserve minus the curve integral, tx and exit fees', async (t) => {
    t.same((await get(`/ixo/bonds/${POWER}/sell_return/10`)).body, {
      adjusted_supply: coin('xusd', '2500'),
      returns: [coin('uixo', '747005000')],
      tx_fees: [coin('uixo', '3735025')],
      exit_fees: [coin('uixo', '747005')],
      total_returns: [coin('uixo', '742522970')],
      total_fees: [coin('uixo', '4482030')],
    });
    const pool = (await get(`/ixo/bonds/${POOL}/sell_return/10`)).body;
    t.same(pool.exit_fees, [coin('uixo', '0'), coin('xusd', '0')], 'no exit fee: zeros in every reserve token');
    t.same(pool.total_returns, [coin('uixo', '19940'), coin('xusd', '9970')]);
    await expectError(
      `/ixo/bonds/${POWER}/sell_return/2501`,
      400,
      9,
      'cannot burn more tokens than the current supply',
    );
  });

  t.test('swap return: constant product after the tx fee; only for swappers', async (t) => {
    t.same((await get(`/ixo/bonds/${POOL}/swap_return/10000uixo/xusd`)).body, {
      total_fees: [coin('uixo', '30')],
      total_returns: [coin('xusd', '4960')],
    });
    await expectError(`/ixo/bonds/${POOL}/swap_return/1uixo/xusd`, 400, 9, 'swap amount too small to give any return');
    await expectError(
      `/ixo/bonds/${POOL}/swap_return/10uixo/stake`,
      400,
      3,
      'stake: token is not a valid reserve token',
    );
    await expectError(
      `/ixo/bonds/${POWER}/swap_return/10uixo/xusd`,
      400,
      9,
      'function is not available for the function type',
    );
  });

  t.test('alpha maximums of the alpha bond; refused for other bonds', async (t) => {
    t.same((await get(`/ixo/bonds/${ALPHA}/alpha_maximums`)).body, {
      max_system_alpha_increase: '0.000025000000000000',
      max_system_alpha: '0.500000000000000000',
    });
    await expectError(
      `/ixo/bonds/${POWER}/alpha_maximums`,
      400,
      9,
      'power_function: function is not available for the function type',
    );
  });

  t.test('bad amounts answer 400 with the chain message; unknown bonds 404', async (t) => {
    await expectError(`/ixo/bonds/${POWER}/buy_price/ten`, 400, 3, 'invalid decimal coin expression: tenxusd');
    await expectError(`/ixo/bonds/${POWER}/buy_price/10xusd`, 400, 3, 'xusd: invalid coins');
    await expectError(`/ixo/bonds/${POOL}/swap_return/-5uixo/xusd`, 400, 3, 'invalid decimal coin expression: -5uixo');
    await expectError(`/ixo/bonds/${POOL}/price/10`, 400, 9, 'function is not available for the function type');
    t.equal((await get('/ixo/bonds/did:ixo:entity:unknown/sell_return/1')).status, 404);
  });
});
