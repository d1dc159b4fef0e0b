// A test strategy for portfolio live runs (test/portfolio/portfolio-run.e2e.test.ts).
import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * Rotates trades on one instrument: on every `every`-th tick it opens a trade of `units` (negative:
 * short) while its book holds fewer than `max` trades there, and otherwise closes its oldest one by
 * trade ID. With `park` (default) it also leaves one GTC limit order far from the price (200 pips), which never
 * fills: a pending order of its own for the kill switch or a close of its book to cancel. It reads
 * only its own book (`ctx.trades`, `ctx.orders`), so in a portfolio it never touches another's trades.
 */
const liveA = defineStrategy({
  name: 'live-a',
  params: { instrument: 'EUR_USD', units: 1000, every: 2, max: 3, park: true },
  subscribe: (p) => ({ ticks: [p.instrument] }),
  init: () => ({ ticks: 0, opened: 0, closed: 0, parked: false }),
  onTick(ctx, s) {
    const { instrument, units, every, max, park } = ctx.params;
    const ticks = s.ticks + 1;
    const quote = ctx.quote(instrument);
    if (park && !s.parked && quote !== undefined) {
      const away = ctx.pips(instrument, 200);
      const price = ctx.round(instrument, units > 0 ? quote.bid - away : quote.ask + away);
      return {
        state: { ...s, ticks, parked: true },
        intents: [ctx.limit(instrument, units, price, { timeInForce: 'GTC' })],
      };
    }
    if (ticks % every !== 0) return { state: { ...s, ticks } };
    const mine = ctx.trades(instrument);
    if (mine.length < max)
      return { state: { ...s, ticks, opened: s.opened + 1 }, intents: [ctx.market(instrument, units)] };
    const oldest = [...mine].sort((x, y) => Number(x.id) - Number(y.id))[0]!;
    return { state: { ...s, ticks, closed: s.closed + 1 }, intents: [ctx.closeTrade(oldest.id)] };
  },
});

export default liveA;
