import { defineStrategy } from 'fxflow';

/**
 * Trades Autochartist chart patterns: when a pattern of probability >= `minProbability` percent
 * is published for the instrument, it enters in the pattern's direction with a take profit at the
 * far side of Autochartist's prediction box and a stop loss `stopPips` away, and closes what is
 * still open when the prediction's time runs out. One trade at a time.
 *
 *   fxflow record --instruments EUR_USD --labs signals       (builds the signal history)
 *   fxflow backtest strategies/autochartist-patterns.ts
 */
export default defineStrategy({
  name: 'autochartist-patterns',
  description: 'Enter on Autochartist chart patterns, exit at the prediction box or its end',
  params: { instrument: 'EUR_USD', granularity: 'M15', units: 10_000, minProbability: 65, stopPips: 30 },
  subscribe: (p) => ({ candles: [`${p.instrument}:${p.granularity}`], signals: [p.instrument] }),
  init: () => ({ until: 0, taken: 0 }),
  onSignal(ctx, s) {
    const g = ctx.signal!;
    const { instrument, units, minProbability, stopPips } = ctx.params;
    if (g.instrument !== instrument || g.data?.type !== 'chartpattern' || g.direction === 'flat') return;
    if ((g.strength ?? 0) * 100 < minProbability || ctx.position(instrument).net !== 0) return;
    const box = g.data.prediction as { pricelow: number; pricehigh: number; timeto: number } | undefined;
    const q = ctx.quote(instrument);
    if (box === undefined || q === undefined || box.timeto * 1000 <= ctx.now) return;
    const long = g.direction === 'up';
    const tp = long ? box.pricehigh : box.pricelow;
    // A target already passed is no trade.
    if (long ? tp <= q.ask : tp >= q.bid) return;
    const intent = ctx.market(instrument, long ? units : -units, {
      tp: ctx.round(instrument, tp),
      sl: { distance: ctx.pips(instrument, stopPips) },
    });
    return { state: { until: box.timeto * 1000, taken: s.taken + 1 }, intents: [intent] };
  },
  onCandle(ctx, s) {
    const { instrument } = ctx.params;
    if (s.until > 0 && ctx.now >= s.until) {
      return {
        state: { ...s, until: 0 },
        intents: ctx.position(instrument).net !== 0 ? [ctx.closePosition(instrument)] : [],
      };
    }
    return;
  },
});
