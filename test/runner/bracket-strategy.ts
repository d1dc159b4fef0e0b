// A test strategy module for --broker sim restarts (loaded in process and through `fxflow run`).
import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * On the 2nd EUR_USD tick: buys 1000 with a take profit and a stop loss 30 pips away, and rests a
 * buy limit 50 pips below. On the 4th: buys 300 more. Then only counts: the account holds an open
 * trade with dependent orders and a pending order for the rest of the run. State counts ticks,
 * orders and fills it saw.
 */
const bracket = defineStrategy({
  params: { units: '1000' },
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ ticks: 0, orders: 0, fills: 0 }),
  onTick(ctx, s) {
    const ticks = s.ticks + 1;
    const bid = ctx.tick?.bid ?? 0;
    if (ticks === 2) {
      return {
        state: { ...s, ticks, orders: s.orders + 2 },
        intents: [
          ctx.market('EUR_USD', ctx.params.units, { tp: { distance: 0.003 }, sl: { distance: 0.003 } }),
          ctx.limit('EUR_USD', '500', bid - 0.005),
        ],
      };
    }
    if (ticks === 4)
      return { state: { ...s, ticks, orders: s.orders + 1 }, intents: [ctx.market('EUR_USD', '300')] };
    return { state: { ...s, ticks } };
  },
  onTransaction(ctx, s) {
    return ctx.transaction?.type === 'ORDER_FILL' ? { state: { ...s, fills: s.fills + 1 } } : undefined;
  },
});

export default bracket;
