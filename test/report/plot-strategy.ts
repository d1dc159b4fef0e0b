// A test strategy module (loaded by test/report/plots.browser.test.ts through `fxflow backtest`):
// an SMA crossover that draws its averages on the prices, its RSI in a pane, and its signals as markers.
import { defineStrategy } from '../../src/strategy/api.ts';

export default defineStrategy({
  name: 'plot-cross',
  params: { fast: 10, slow: 30, units: 10_000 },
  subscribe: { candles: ['EUR_USD:H1'] },
  init: () => ({ above: undefined as boolean | undefined }),
  onCandle(ctx, s) {
    const fast = ctx.sma(ctx.params.fast),
      slow = ctx.sma(ctx.params.slow);
    ctx.plot('fast SMA', fast);
    ctx.plot('slow SMA', slow);
    ctx.plot('RSI 14', ctx.indicator('RSI', { period: 14 }), { pane: 'rsi' });
    if (fast === undefined || slow === undefined) return;
    const above = fast > slow;
    if (s.above === undefined || above === s.above) return { state: { above } };
    ctx.plot(above ? 'buy signal' : 'sell signal', ctx.close, { style: above ? 'up' : 'down' });
    const net = ctx.position('EUR_USD').net;
    const target = above ? ctx.params.units : -ctx.params.units;
    return { state: { above }, intents: net === target ? [] : [ctx.market('EUR_USD', target - net)] };
  },
});
