// A test strategy module (loaded through `fxflow run`): it reverses on every `every`-th EUR_USD tick,
// sending `target - net` as the shipped sma-cross does (+units, then -units, ...), so after its first
// order every order is a reversal: half closes the position, half opens the opposite one.
import { defineStrategy } from '../../src/strategy/api.ts';

const reversing = defineStrategy({
  name: 'reversing',
  params: { every: 1, units: 1000 },
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ ticks: 0, signal: -1, orders: 0 }),
  onTick(ctx, s) {
    const ticks = s.ticks + 1;
    if (ticks % ctx.params.every !== 0) return { state: { ...s, ticks } };
    const signal = -s.signal;
    const delta = signal * ctx.params.units - ctx.position('EUR_USD').net;
    if (delta === 0) return { state: { ...s, ticks, signal } };
    return { state: { ticks, signal, orders: s.orders + 1 }, intents: [ctx.market('EUR_USD', delta)] };
  },
});

export default reversing;
