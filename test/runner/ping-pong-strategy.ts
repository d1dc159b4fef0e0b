// A test strategy module (loaded by the runner tests, in process and through `fxflow run`).
import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * Buys on every `every`-th EUR_USD tick while flat-or-short and sells while long: orders keep flowing
 * and the position stays within one trade. State counts ticks, orders and fills it saw, keeps the
 * time of the last tick (`last`), and counts ticks that were not newer than it (`again`: a price
 * seen a second time, which a restart must never deliver).
 */
const pingPong = defineStrategy({
  params: { every: 3, units: '1000' },
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ ticks: 0, orders: 0, fills: 0, last: 0, again: 0 }),
  onTick(ctx, s) {
    const ticks = s.ticks + 1;
    const at = ctx.tick?.at ?? ctx.now;
    const last = Math.max(s.last, at);
    const again = at <= s.last ? s.again + 1 : s.again;
    if (ticks % ctx.params.every !== 0) return { state: { ...s, ticks, last, again } };
    const net = ctx.position('EUR_USD').net;
    const units = net > 0 ? `-${ctx.params.units}` : ctx.params.units;
    return {
      state: { ...s, ticks, last, again, orders: s.orders + 1 },
      intents: [ctx.market('EUR_USD', units)],
    };
  },
  onTransaction(ctx, s) {
    return ctx.transaction?.type === 'ORDER_FILL' ? { state: { ...s, fills: s.fills + 1 } } : undefined;
  },
});

export default pingPong;
