import { defineStrategy } from 'fxflow';

/**
 * Channel breakout with bracket exits: when a candle closes above the highest close of the last
 * `lookback` candles, buy with a take-profit and a stop-loss set `tpAtr` and `slAtr` ATRs away
 * (and the mirror image for shorts). Optionally a trailing stop instead of the fixed stop.
 * One trade at a time; exits are left to the broker (v20 TAKE_PROFIT / STOP_LOSS orders).
 */
export default defineStrategy({
  name: 'breakout-tpsl',
  description: 'Donchian-style breakout with ATR take-profit / stop-loss on fill',
  params: {
    instrument: 'EUR_USD',
    granularity: 'H1',
    lookback: 24,
    atrPeriod: 14,
    tpAtr: 2,
    slAtr: 1,
    trailing: false,
    units: 10_000,
  },
  subscribe: (p) => ({ candles: [`${p.instrument}:${p.granularity}`] }),
  init: () => ({ entries: 0 }),
  onCandle(ctx, s) {
    const p = ctx.params;
    const atr = ctx.indicator('ATR', { period: p.atrPeriod });
    const closes = ctx.closes(p.lookback + 1);
    if (atr === undefined || closes.length <= p.lookback) return;
    if (ctx.trades(p.instrument).length > 0 || ctx.orders(p.instrument).some((o) => o.type === 'MARKET'))
      return;
    const prior = closes.slice(0, -1);
    const hi = Math.max(...prior);
    const lo = Math.min(...prior);
    const c = ctx.close;
    let side = 0;
    if (c > hi) side = 1;
    else if (c < lo) side = -1;
    if (side === 0) return;
    // v20 takes a take-profit as a price and a stop-loss as a price or a distance from the fill.
    const tp = c + side * p.tpAtr * atr;
    const exits = p.trailing ? { tp, trailing: p.slAtr * atr } : { tp, sl: { distance: p.slAtr * atr } };
    ctx.log.debug({ side, close: c, atr }, 'breakout');
    return { state: { entries: s.entries + 1 }, intents: [ctx.market(p.instrument, side * p.units, exits)] };
  },
});
