// A test strategy for portfolio live runs (test/portfolio/portfolio-run.e2e.test.ts).
import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * On its `openAfter`-th tick it opens one trade of `units` and parks one GTC limit order 200 pips
 * away (never filled); then it throws on the `throwAfter`-th tick that finds its trade open: a
 * member that fails while it holds a position and a pending order.
 */
const thrower = defineStrategy({
  name: 'thrower',
  params: { instrument: 'GBP_USD', units: 1000, openAfter: 1, throwAfter: 3 },
  subscribe: (p) => ({ ticks: [p.instrument] }),
  init: () => ({ ticks: 0, sent: false, withTrade: 0 }),
  onTick(ctx, s) {
    const { instrument, units, openAfter, throwAfter } = ctx.params;
    const ticks = s.ticks + 1;
    const quote = ctx.quote(instrument);
    if (!s.sent) {
      if (ticks < openAfter || quote === undefined) return { state: { ...s, ticks } };
      const away = ctx.pips(instrument, 200);
      const price = ctx.round(instrument, units > 0 ? quote.bid - away : quote.ask + away);
      return {
        state: { ...s, ticks, sent: true },
        intents: [ctx.market(instrument, units), ctx.limit(instrument, units, price, { timeInForce: 'GTC' })],
      };
    }
    if (ctx.trades(instrument).length === 0) return { state: { ...s, ticks } };
    const withTrade = s.withTrade + 1;
    if (withTrade >= throwAfter)
      throw new Error(`thrower: deliberate failure on tick ${withTrade} with its trade open`);
    return { state: { ...s, ticks, withTrade } };
  },
});

export default thrower;
