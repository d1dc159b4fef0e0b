// A test strategy for the replay tests (loaded by `fxflow run` and `fxflow replay`): it decides on
// the content of the prices, not on how many it has seen, so a test knows which pushed price makes
// an order whatever else reaches the strategy (the sandbox's opening price).
import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * On every EUR_USD tick whose time in seconds is 2 mod 3 (from 2024-01-02 10:00 UTC): a market
 * order of `units`, buying while flat or short and selling while long. Counts the fills it saw.
 */
const replayStrategy = defineStrategy({
  params: { units: '1000' },
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ orders: 0, fills: 0 }),
  onTick(ctx, s) {
    const at = ctx.tick?.at ?? 0;
    if (at < Date.UTC(2024, 0, 2, 10, 0) || Math.floor(at / 1000) % 3 !== 2) return;
    const net = ctx.position('EUR_USD').net;
    return {
      state: { ...s, orders: s.orders + 1 },
      intents: [ctx.market('EUR_USD', net > 0 ? `-${ctx.params.units}` : ctx.params.units)],
    };
  },
  onTransaction(ctx, s) {
    return ctx.transaction?.type === 'ORDER_FILL' ? { state: { ...s, fills: s.fills + 1 } } : undefined;
  },
});

export default replayStrategy;
