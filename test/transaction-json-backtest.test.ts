import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticCandles } from '../src/adapters/catalog/synthetic.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { transactionJsonFast } from '../src/domain/v20/transaction-json.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/**
 * A backtest's transactions.jsonl, written by the serialiser, is JSON.stringify's text of every
 * transaction the run made, line for line: market orders, fills that open, close and reduce,
 * on-fill take profits, stop losses and trailing stops, their cancels, client IDs, daily financing.
 */

const silent = { debug() {}, info() {}, warn() {}, error() {} };

const strategy = defineStrategy({
  name: 'mixer',
  params: {},
  subscribe: { candles: ['EUR_USD:M5'] },
  init: () => ({ n: 0 }),
  onCandle(ctx, st) {
    const n = st.n + 1;
    if (n % 9 !== 0) return { state: { n } };
    const net = ctx.position('EUR_USD').net;
    const units = net > 0 ? -3000 : net < 0 ? 1000 : 2000;
    return {
      state: { n },
      intents: [
        ctx.market('EUR_USD', units, {
          tp: { distance: 0.003 },
          sl: { distance: 0.002 },
          trailing: 0.0025,
          tag: 'mix',
          comment: n % 2 ? 'a "quoted" note' : 'plain',
        }),
      ],
    };
  },
});

describe('transactions.jsonl', () => {
  it('holds JSON.stringify’s text of every transaction of a backtest, fills and cancels through the templates', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-txjson-'));
    try {
      const config = loadConfig(undefined, {
        run: { from: '2024-01-01', to: '2024-02-15' },
        costs: { financing: true },
      });
      const r = await runBacktest({
        loaded: { strategy, name: 'mixer', params: {}, file: 'mixer.ts' } as never,
        config,
        instruments: loadInstruments(),
        log: silent,
        candles: (q) =>
          syntheticCandles({
            instrument: q.instrument,
            granularity: q.granularity,
            from: q.from,
            to: q.to,
            seed: 5,
          }),
        keepTransactions: true,
        runDir: join(dir, 'run'),
      });
      const lines = readFileSync(join(dir, 'run', 'transactions.jsonl'), 'utf8').split('\n');
      expect(lines.pop()).toBe('');
      expect(lines).toEqual(r.transactions.map((t) => JSON.stringify(t)));
      const types = new Set(r.transactions.map((t) => t.type));
      for (const t of [
        'ORDER_FILL',
        'ORDER_CANCEL',
        'MARKET_ORDER',
        'TAKE_PROFIT_ORDER',
        'STOP_LOSS_ORDER',
        'TRAILING_STOP_LOSS_ORDER',
        'DAILY_FINANCING',
      ])
        expect(types).toContain(t);
      // The simulator's fills, cancels, market orders and on-fill orders are all of the templates' shapes.
      const templated = r.transactions.filter((t) =>
        [
          'ORDER_FILL',
          'ORDER_CANCEL',
          'MARKET_ORDER',
          'TAKE_PROFIT_ORDER',
          'STOP_LOSS_ORDER',
          'TRAILING_STOP_LOSS_ORDER',
        ].includes(t.type),
      );
      expect(templated.length).toBeGreaterThan(200);
      for (const t of templated) expect(transactionJsonFast(t)).toBe(JSON.stringify(t));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
