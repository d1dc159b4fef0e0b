// A test strategy for the replay tests: decides on M1 candles (built from ticks with --candles ticks,
// or the candles endpoint's), so a candle's decision is made before the price that completed it.
import { defineStrategy } from '../../src/strategy/api.ts';

/** On every EUR_USD M1 candle: buys while flat or short, sells while long; counts its fills. */
const replayCandles = defineStrategy({
  params: { units: '1000' },
  subscribe: { candles: ['EUR_USD:M1'] },
  init: () => ({ candles: 0, fills: 0 }),
  onCandle(ctx, s) {
    const net = ctx.position('EUR_USD').net;
    return {
      state: { ...s, candles: s.candles + 1 },
      intents: [ctx.market('EUR_USD', net > 0 ? `-${ctx.params.units}` : ctx.params.units)],
    };
  },
  onTransaction(ctx, s) {
    return ctx.transaction?.type === 'ORDER_FILL' ? { state: { ...s, fills: s.fills + 1 } } : undefined;
  },
});

export default replayCandles;
