// A test strategy module (loaded by `fxflow run` in the runner tests): a loop gone wrong.
import { defineStrategy } from '../../src/strategy/api.ts';

/**
 * At its first EUR_USD tick returns `count` market orders of 1 unit at once, then nothing more (its
 * state says it fired, so a restart restored from the journal does not fire again).
 */
const flood = defineStrategy({
  params: { count: 10_000 },
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ fired: false }),
  onTick(ctx, s) {
    if (s.fired) return;
    return {
      state: { fired: true },
      intents: Array.from({ length: ctx.params.count }, () => ctx.market('EUR_USD', 1)),
    };
  },
});

export default flood;
