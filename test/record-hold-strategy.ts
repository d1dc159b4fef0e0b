// A test strategy module (loaded by test/record-prices.test.ts through `fxflow backtest`).
import { defineStrategy } from '../src/strategy/api.ts';

/** Buys `units` of `instrument` on its first tick and holds them: the run's financing is the holding's. */
export default defineStrategy({
  params: { instrument: 'EUR_USD', units: '10000' },
  subscribe: (p) => ({ ticks: [p.instrument] }),
  init: () => ({ bought: false }),
  onTick(ctx, s) {
    if (s.bought) return;
    return { state: { bought: true }, intents: [ctx.market(ctx.params.instrument, ctx.params.units)] };
  },
});
