// A test strategy for the replay tests: decides on labs spreads and COT reports only, with limit
// orders far from the market, so each decision is a pending order at the account and in the
// simulator alike. It subscribes to EUR_USD ticks too: the run has a price, so labs events are
// stamped on the market's clock.
import { defineStrategy } from '../../src/strategy/api.ts';

/** On every EUR_USD spread interval and COT report: a buy limit of 1000 EUR_USD at 0.5, GTC. */
const replaySpreadCot = defineStrategy({
  params: {},
  subscribe: { ticks: ['EUR_USD'], spreads: ['EUR_USD'], cot: ['EUR_USD'] },
  init: () => ({ events: 0 }),
  onSpread(ctx, s) {
    return { state: { events: s.events + 1 }, intents: [ctx.limit('EUR_USD', 1000, 0.5)] };
  },
  onCot(ctx, s) {
    return { state: { events: s.events + 1 }, intents: [ctx.limit('EUR_USD', 1000, 0.5)] };
  },
});

export default replaySpreadCot;
