import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * The benchmark's second variant: the SMA crossover of `strategies/sma-cross.ts`, with a take
 * profit, a stop loss and a trailing stop on every entry (distances in price units), so the
 * simulator keeps three resting orders per trade and walks every candle's path for them.
 */
export default defineStrategy({
  name: 'sma-cross-exits',
  description: 'SMA(fast) / SMA(slow) crossover with TP, SL and trailing stop on every entry (benchmark)',
  params: {
    instrument: 'EUR_USD',
    granularity: 'M1',
    fast: 10,
    slow: 30,
    units: 10_000,
    tp: 0.0015,
    sl: 0.001,
    trailing: 0.0008,
  },
  subscribe: (p) => ({ candles: [`${p.instrument}:${p.granularity}:M`] }),
  init: () => ({ signal: 0 }),
  onCandle(ctx, s) {
    const { fast, slow, units, instrument, tp, sl, trailing } = ctx.params;
    const f = ctx.sma(fast);
    const sw = ctx.sma(slow);
    if (f === undefined || sw === undefined) return;
    const signal = f > sw ? 1 : f < sw ? -1 : s.signal;
    if (signal === s.signal) return;
    const delta = signal * units - ctx.position(instrument).net;
    return {
      state: { signal },
      intents:
        delta === 0
          ? []
          : [ctx.market(instrument, delta, { tp: { distance: tp }, sl: { distance: sl }, trailing })],
    };
  },
});
