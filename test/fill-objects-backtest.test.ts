import { describe, expect, it } from 'vitest';
import { syntheticCandles } from '../src/adapters/catalog/synthetic.ts';
import { runBacktest, type BacktestOptions } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import type { Transaction } from '../src/domain/v20/index.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/**
 * A backtest builds the simulator's ORDER_FILL objects only for a reader of them (the strategy's
 * onTransaction, kept transactions, the run folder): the engine's portfolio and the order counters
 * read notes. The figures are the same either way.
 */

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Reverses every 12 candles, with a take profit and a stop loss: fills that open, close and reduce. */
function strategy(seen?: Transaction[]) {
  return defineStrategy({
    name: 'flipper',
    params: {},
    subscribe: { candles: ['EUR_USD:M5'] },
    init: () => ({ n: 0 }),
    onCandle(ctx, st) {
      const n = st.n + 1;
      if (n % 12 !== 0) return { state: { n } };
      const net = ctx.position('EUR_USD').net;
      return {
        state: { n },
        intents: [
          ctx.market('EUR_USD', net > 0 ? -3000 : 2000, { tp: { distance: 0.003 }, sl: { distance: 0.002 } }),
        ],
      };
    },
    ...(seen
      ? {
          onTransaction: (ctx: { transaction?: Transaction }) =>
            void (ctx.transaction && seen.push(ctx.transaction)),
        }
      : {}),
  });
}

async function backtest(seen: Transaction[] | undefined, extra: Partial<BacktestOptions> = {}) {
  const config = loadConfig(undefined, {
    run: { from: '2024-01-01', to: '2024-02-01' },
    costs: { financing: false },
  });
  return runBacktest({
    loaded: { strategy: strategy(seen), name: 'flipper', params: {}, file: 'flipper.ts' } as never,
    config,
    instruments: loadInstruments(),
    log: silent,
    candles: (q) =>
      syntheticCandles({
        instrument: q.instrument,
        granularity: q.granularity,
        from: q.from,
        to: q.to,
        seed: 3,
      }),
    ...extra,
  });
}

describe('fill objects in a backtest', () => {
  it('builds none with no reader, one per fill for onTransaction or kept transactions, with the same report', async () => {
    const bare = await backtest(undefined);
    expect(bare.sim.fills).toBeGreaterThan(100);
    expect(bare.sim.fillObjects).toBe(0);

    const seen: Transaction[] = [];
    const read = await backtest(seen);
    expect(read.sim.fills).toBe(bare.sim.fills);
    expect(read.sim.fillObjects).toBe(read.sim.fills);
    expect(seen.filter((t) => t.type === 'ORDER_FILL')).toHaveLength(read.sim.fills);

    const kept = await backtest(undefined, { keepTransactions: true });
    expect(kept.sim.fillObjects).toBe(kept.sim.fills);
    expect(kept.transactions.filter((t) => t.type === 'ORDER_FILL')).toHaveLength(kept.sim.fills);
    // The strategy saw every transaction the account made, in order.
    expect(seen.map((t) => t.id)).toEqual(kept.transactions.map((t) => t.id));

    // The report: the same whoever read the objects (timings aside).
    const figures = (r: typeof bare): unknown => ({ ...r.summary, wallMs: 0, engine: undefined });
    expect(figures(read)).toEqual(figures(bare));
    expect(figures(kept)).toEqual(figures(bare));
    expect(read.trades).toEqual(bare.trades);
    expect(read.equity).toEqual(bare.equity);
  }, 60_000);
});
