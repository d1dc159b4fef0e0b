import { describe, expect, it } from 'vitest';
import { syntheticCandles } from '../src/adapters/catalog/synthetic.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { defineStrategy, type PositionView } from '../src/strategy/api.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('ctx.position: computed once per event', () => {
  it('gives one object for every call of an event, a new one once a fill or a new price moves it, always equal to the open trades', async () => {
    const seen = { calls: 0, same: 0, checked: 0, afterFill: 0 };
    const wrong: string[] = [];
    const check = (
      p: PositionView,
      trades: readonly { units: number; unrealizedPL: number }[],
      where: string,
    ): void => {
      const net = trades.reduce((n, t) => n + t.units, 0);
      const pl = trades.reduce((n, t) => n + t.unrealizedPL, 0);
      seen.checked++;
      if (p.net !== net || Math.abs(p.unrealizedPL - pl) > 1e-9)
        wrong.push(`${where}: ${p.net}/${p.unrealizedPL} against ${net}/${pl}`);
    };
    let lastView: PositionView | undefined;
    let lastFillView: PositionView | undefined;
    const s = defineStrategy({
      name: 'asks-often',
      params: {},
      subscribe: { candles: ['EUR_USD:M5', 'GBP_USD:M5'] },
      init: () => ({ n: 0 }),
      onCandle(ctx, st) {
        const a = ctx.position('EUR_USD');
        const b = ctx.position('GBP_USD');
        const again = ctx.position('EUR_USD');
        seen.calls += 3;
        if (again === a && ctx.position('GBP_USD') === b) seen.same++;
        if (lastView === a) wrong.push('a view outlived its event');
        lastView = a;
        check(a, ctx.trades('EUR_USD'), 'onCandle EUR_USD');
        check(b, ctx.trades('GBP_USD'), 'onCandle GBP_USD');
        const n = st.n + 1;
        if (ctx.candle?.instrument !== 'EUR_USD' || n % 7 !== 0) return { state: { n } };
        return { state: { n }, intents: [ctx.market('EUR_USD', a.net > 0 ? -2000 : 1000)] };
      },
      onTransaction(ctx) {
        if (ctx.transaction?.type !== 'ORDER_FILL') return;
        const p = ctx.position('EUR_USD');
        if (p === lastView) wrong.push('the view of before the fill was given after it');
        lastFillView = p;
        seen.afterFill++;
        check(p, ctx.trades('EUR_USD'), 'after a fill');
      },
    });
    const config = loadConfig(undefined, {
      run: { from: '2024-01-01', to: '2024-01-20' },
      costs: { financing: false },
    });
    await runBacktest({
      loaded: { strategy: s, name: 'asks-often', params: {}, file: 'asks-often.ts' } as never,
      config,
      instruments: loadInstruments(),
      log: silent,
      candles: (q) =>
        syntheticCandles({
          instrument: q.instrument,
          granularity: q.granularity,
          from: q.from,
          to: q.to,
          seed: q.instrument === 'EUR_USD' ? 1 : 2,
        }),
    });
    expect(wrong).toEqual([]);
    expect(seen.same).toBe(seen.calls / 3);
    expect(seen.afterFill).toBeGreaterThan(50);
    expect(lastFillView).toBeDefined();
  }, 60_000);
});
