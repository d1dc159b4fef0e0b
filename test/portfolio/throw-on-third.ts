// A test strategy module: buys 500 EUR_USD on its first price and throws on its third (a portfolio
// member stopped alone).
import { defineStrategy } from '../../src/strategy/api.ts';

export default defineStrategy({
  params: {},
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ n: 0 }),
  onTick(ctx, s) {
    const n = s.n + 1;
    if (n === 3) throw new Error('a deliberate failure on the third price');
    return n === 1 ? { state: { n }, intents: [ctx.market('EUR_USD', '500')] } : { state: { n } };
  },
});
