import { defineStrategy } from 'fxflow';

/**
 * SMA crossover: long while the fast average is above the slow one, short (or flat with
 * `longOnly`) while it is below. Orders are market orders for the difference between the target
 * and the current net position, so one order flips a position (v20 REDUCE_FIRST netting).
 *
 * Classic reference configuration (as other engines benchmark it):
 *   fxflow backtest strategies/sma-cross.ts --config config/classic.json --param longOnly=true
 */
export default defineStrategy({
  name: 'sma-cross',
  description: 'SMA(fast) / SMA(slow) crossover on one instrument',
  params: {
    instrument: 'EUR_USD',
    granularity: 'H1',
    component: 'M',
    fast: 10,
    slow: 30,
    units: 10_000,
    longOnly: false,
  },
  subscribe: (p) => ({ candles: [`${p.instrument}:${p.granularity}:${p.component}`] }),
  init: () => ({ signal: 0 }),
  onCandle(ctx, s) {
    const { fast, slow, units, longOnly, instrument } = ctx.params;
    const f = ctx.sma(fast);
    const sl = ctx.sma(slow);
    if (f === undefined || sl === undefined) return;
    const signal = f > sl ? 1 : f < sl ? -1 : s.signal;
    if (signal === s.signal) return;
    const target = signal > 0 ? units : longOnly ? 0 : -units;
    const delta = target - ctx.position(instrument).net;
    return { state: { signal }, intents: delta === 0 ? [] : [ctx.market(instrument, delta)] };
  },
});
