import { defineStrategy } from 'fxflow';

/**
 * Tick momentum: follows an exponential average of the mid price tick by tick; when the mid runs
 * `entryPips` away from it and no trade is open, enters in that direction with a take-profit and a
 * stop-loss `tpPips` / `slPips` away (v20 on-fill orders, filled on the following ticks).
 *
 *   fxflow backtest strategies/tick-momentum.ts --ticks ../shared/data/fx/quantconnect-lean-oanda/tick/eurusd \
 *     --from 2014-05-01 --to 2014-05-16
 */
export default defineStrategy({
  name: 'tick-momentum',
  description: 'EMA-of-ticks momentum entries with TP/SL on fill',
  params: {
    instrument: 'EUR_USD',
    alpha: 0.01,
    entryPips: 3,
    tpPips: 5,
    slPips: 5,
    units: 10_000,
    pip: 0.0001,
  },
  subscribe: (p) => ({ ticks: [p.instrument] }),
  // `pending`: the client ID of the entry order whose outcome it waits for ('' when none).
  init: () => ({ ema: 0, pending: '' }),
  onTick(ctx, s) {
    const p = ctx.params;
    const t = ctx.tick!;
    const mid = (t.bid + t.ask) / 2;
    const ema = s.ema === 0 ? mid : s.ema + p.alpha * (mid - s.ema);
    const away = (mid - ema) / p.pip;
    if (s.pending !== '' || Math.abs(away) < p.entryPips || ctx.trades(p.instrument).length > 0)
      return { state: { ema, pending: s.pending } };
    const side = away > 0 ? 1 : -1;
    const intent = ctx.market(p.instrument, side * p.units, {
      tp: mid + side * p.tpPips * p.pip,
      sl: { distance: p.slPips * p.pip },
    });
    return { state: { ema, pending: intent.id }, intents: [intent] };
  },
  onTransaction(ctx, s) {
    // Ready for the next entry once *its own* order has an outcome: filled, cancelled or rejected.
    // Other transactions (the previous trade's TP fill, its linked SL cancel) do not end the wait.
    if (s.pending === '' || !endsOrder(ctx.transaction!, s.pending)) return;
    return { state: { ema: s.ema, pending: '' } };
  },
});

/** Whether `t` is the outcome (fill, cancel or reject) of the order with client ID `clientID`. */
function endsOrder(t: { type: string }, clientID: string): boolean {
  const x = t as { type: string; clientOrderID?: string; clientExtensions?: { id?: string } };
  if (x.type === 'ORDER_FILL' || x.type === 'ORDER_CANCEL') return x.clientOrderID === clientID;
  return x.type.endsWith('_REJECT') && x.clientExtensions?.id === clientID;
}
