import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { syntheticCandles } from '../src/adapters/catalog/synthetic.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { IndicatorMemo } from '../src/engine/indicator-memo.ts';
import { defineStrategy } from '../src/strategy/api.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Bollinger band reversion: the same indicator in every trial, its params and the point it starts at vary. */
const bands = defineStrategy({
  name: 'bands',
  params: { period: 20, stdDev: 2, units: 1000, startAfter: 0 },
  subscribe: { candles: ['EUR_USD:M5'] },
  init: () => ({ n: 0, side: 0 }),
  onCandle(ctx, s) {
    const n = s.n + 1;
    if (n <= ctx.params.startAfter) return { state: { n, side: s.side } };
    const b = ctx.indicator('BollingerBands', { period: ctx.params.period, stdDev: ctx.params.stdDev });
    const rsi = ctx.indicator('RSI', { period: 14 });
    if (b === undefined || rsi === undefined) return { state: { n, side: s.side } };
    const side = ctx.close < b.lower && rsi < 40 ? 1 : ctx.close > b.upper && rsi > 60 ? -1 : s.side;
    if (side === s.side) return { state: { n, side } };
    const delta = side * ctx.params.units - ctx.position('EUR_USD').net;
    return { state: { n, side }, intents: delta === 0 ? [] : [ctx.market('EUR_USD', delta)] };
  },
});

async function trial(
  params: Partial<typeof bands.params>,
  memo?: IndicatorMemo,
  seed = 3,
  to = '2024-03-01',
) {
  const config = loadConfig(undefined, { run: { from: '2024-01-01', to }, costs: { financing: false } });
  const r = await runBacktest({
    loaded: {
      strategy: bands,
      name: 'bands',
      params: { ...bands.params, ...params },
      file: 'bands.ts',
    } as never,
    config,
    instruments: loadInstruments(),
    log: silent,
    keepTransactions: true,
    candles: (q) =>
      syntheticCandles({
        instrument: q.instrument,
        granularity: q.granularity,
        from: q.from,
        to: q.to,
        seed,
      }),
    ...(memo ? { indicatorMemo: memo } : {}),
  });
  return r.transactions.map((t) => JSON.stringify(t)).join('\n');
}

describe('indicator values shared between trials (IndicatorMemo)', () => {
  it('gives every trial the transactions it gives alone, replaying what an earlier trial computed (property)', async () => {
    const memo = new IndicatorMemo();
    const alone = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(10, 20),
        fc.constantFrom(1.5, 2),
        fc.constantFrom(1000, 2500),
        fc.constantFrom(0, 0, 300),
        async (period, stdDev, units, startAfter) => {
          const p = { period, stdDev, units, startAfter };
          const k = JSON.stringify(p);
          if (!alone.has(k)) alone.set(k, await trial(p));
          expect(await trial(p, memo)).toBe(alone.get(k));
        },
      ),
      { numRuns: 12 },
    );
    // Each (options, point of creation) was computed once; RSI(14) is shared by all that start together.
    expect(memo.stats.replayed).toBeGreaterThan(0);
    expect(memo.stats.recorded).toBeLessThanOrEqual(2 * 2 * 2 + 2);
  }, 120_000);

  it('records an indicator once and replays it in the next trial on the same candles', async () => {
    const memo = new IndicatorMemo();
    await trial({ units: 1000 }, memo);
    expect(memo.stats).toEqual({ recorded: 2, replayed: 0 });
    await trial({ units: 3000 }, memo);
    expect(memo.stats).toEqual({ recorded: 2, replayed: 2 });
    // Another period is another key: computed and recorded anew.
    await trial({ units: 3000 }, memo, 3, '2024-02-15');
    expect(memo.stats).toEqual({ recorded: 4, replayed: 2 });
  }, 60_000);

  it('refuses to replay onto other candles: the check on each close stops the run', async () => {
    const memo = new IndicatorMemo();
    await trial({}, memo, 3);
    await expect(trial({}, memo, 4)).rejects.toThrow(
      /indicator memo: update \d+ of .*BollingerBands.* is fed .* the recorded run was fed/,
    );
  }, 60_000);
});
