import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * The benchmark's floor for the engine: the SMA crossover's signals on every candle (two SMAs, the
 * same handler calls and state), with no orders. Its time minus the data's is what the engine costs
 * per candle; the SMA crossover's time minus this one is what its fills cost.
 */
export default defineStrategy({
  name: 'sma-idle',
  description: 'SMA(fast) / SMA(slow) crossover signals without orders (benchmark floor)',
  params: { instrument: 'EUR_USD', granularity: 'M1', fast: 10, slow: 30 },
  subscribe: (p) => ({ candles: [`${p.instrument}:${p.granularity}:M`] }),
  init: () => ({ signal: 0, changes: 0 }),
  onCandle(ctx, s) {
    const f = ctx.sma(ctx.params.fast);
    const sw = ctx.sma(ctx.params.slow);
    if (f === undefined || sw === undefined) return;
    const signal = f > sw ? 1 : f < sw ? -1 : s.signal;
    if (signal === s.signal) return;
    return { state: { signal, changes: s.changes + 1 } };
  },
});
