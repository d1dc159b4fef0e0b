// A test strategy for portfolio live runs (test/portfolio/portfolio-run.e2e.test.ts).
import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * Builds a position and closes it whole: on every `every`-th tick it adds a trade of `units`
 * (default short) until its book holds `max` trades on the instrument, then closes its position
 * with `ctx.closePosition` (in a portfolio: a reduce-only order for its own book's units, never the
 * account's whole position), and starts over.
 */
const liveB = defineStrategy({
  name: 'live-b',
  params: { instrument: 'EUR_USD', units: -2000, every: 3, max: 3 },
  subscribe: (p) => ({ ticks: [p.instrument] }),
  init: () => ({ ticks: 0, opened: 0, flattened: 0 }),
  onTick(ctx, s) {
    const { instrument, units, every, max } = ctx.params;
    const ticks = s.ticks + 1;
    if (ticks % every !== 0) return { state: { ...s, ticks } };
    if (ctx.trades(instrument).length < max)
      return { state: { ...s, ticks, opened: s.opened + 1 }, intents: [ctx.market(instrument, units)] };
    return {
      state: { ...s, ticks, flattened: s.flattened + 1 },
      intents: [ctx.closePosition(instrument, units > 0 ? 'long' : 'short')],
    };
  },
});

export default liveB;
