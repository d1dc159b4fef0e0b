import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/adapters/catalog/catalog.ts';
import { syntheticCandles } from '../src/adapters/catalog/synthetic.ts';
import { runBacktest, type BacktestResult } from '../src/cli/backtest.ts';
import { loadConfig } from '../src/cli/config.ts';
import { loadStrategy } from '../src/cli/load-strategy.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { amount, formatAmount } from '../src/domain/money.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/**
 * Golden backtests on the bundled synthetic sample (deterministic: fixed generator and seed). The
 * figures are pinned: a change of fill, money or engine semantics shows up here as a diff that
 * must be explained, never silently.
 */
const catalog = new Catalog(resolve(import.meta.dirname, '../data/catalog'));
const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function run(strategy: string, params: string[], overrides: Record<string, Record<string, unknown>> = {}): Promise<BacktestResult> {
  const config = loadConfig(undefined, overrides as never);
  const loaded = await loadStrategy(resolve(import.meta.dirname, '..', strategy), params);
  return runBacktest({ loaded, config, instruments: loadInstruments(), candles: (r) => catalog.candles(r), available: (i, g) => catalog.has(i, g), log: silent, keepTransactions: true });
}

function ledgerSum(r: BacktestResult): string {
  let sum = 0;
  for (const t of r.transactions) {
    const x = t as unknown as Record<string, string>;
    if (t.type === 'TRANSFER_FUNDS') sum += amount(x.amount!);
    if (t.type === 'ORDER_FILL') sum += amount(x.pl!) + amount(x.financing!) - amount(x.commission!) - amount(x.guaranteedExecutionFee!);
    if (t.type === 'DAILY_FINANCING') sum += amount(x.financing!);
  }
  return formatAmount(sum);
}

describe('golden: sma-cross, EUR_USD H1 2024 (bundled sample, defaults)', () => {
  it('reproduces the pinned figures', async () => {
    const r = await run('strategies/sma-cross.ts', ['instrument=EUR_USD', 'granularity=H1']);
    const s = r.summary;
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL').length;
    const financing = r.transactions.filter((t) => t.type === 'DAILY_FINANCING').length;
    expect({
      trades: s.trades,
      wins: s.wins,
      openTrades: s.openTrades,
      fills,
      financingTransactions: financing,
      transactions: r.transactions.length,
      finalBalance: s.finalBalance,
      netPL: s.netPL,
      maxDrawdown: s.maxDrawdown,
      spreadCost: s.spreadCost,
      financing: s.financing,
      sharpe: s.sharpe,
    }).toMatchInlineSnapshot(`
      {
        "fills": 240,
        "finalBalance": 99863.2391,
        "financing": -103.8609,
        "financingTransactions": 261,
        "maxDrawdown": 568.8779,
        "netPL": -133.7609,
        "openTrades": 1,
        "sharpe": -0.1516,
        "spreadCost": 224.5,
        "trades": 239,
        "transactions": 749,
        "wins": 83,
      }
    `);
    // The balance is the exact sum of the transactions.
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as { accountBalance: string };
    expect(ledgerSum(r)).toBe(last.accountBalance);
  });
});

describe('golden: classic reference configuration', () => {
  it('mid candles, zero spread, next-open market fills, long-only, fixed units', async () => {
    const r = await run('strategies/sma-cross.ts', ['instrument=EUR_USD', 'granularity=H1', 'longOnly=true'], { data: { spread: 'mid' }, costs: { financing: false } });
    const s = r.summary;
    expect(s.spreadCost).toBe(0);
    expect(s.financing).toBe(0);
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as { units: string; halfSpreadCost: string }[];
    // Long-only with fixed units: every fill is +10000 (entry) or -10000 (exit).
    expect(new Set(fills.map((f) => f.units))).toEqual(new Set(['10000', '-10000']));
    expect(fills.every((f) => f.halfSpreadCost === '0.0000')).toBe(true);
    expect({ trades: s.trades, wins: s.wins, finalBalance: s.finalBalance, maxDrawdown: s.maxDrawdown }).toMatchInlineSnapshot(`
      {
        "finalBalance": 100008.7,
        "maxDrawdown": 544.3,
        "trades": 119,
        "wins": 42,
      }
    `);
  });
});

describe('golden: breakout-tpsl, GBP_USD H1 2024 (take profit and stop loss on fill)', () => {
  it('reproduces the pinned figures and closes trades through TP and SL orders', async () => {
    const r = await run('strategies/breakout-tpsl.ts', ['instrument=GBP_USD', 'granularity=H1']);
    const reasons = new Map<string, number>();
    for (const t of r.transactions) {
      if (t.type === 'ORDER_FILL') {
        const reason = (t as unknown as { reason: string }).reason;
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
    }
    expect(reasons.get('TAKE_PROFIT_ORDER')).toBeGreaterThan(0);
    expect(reasons.get('STOP_LOSS_ORDER')).toBeGreaterThan(0);
    const s = r.summary;
    expect({
      trades: s.trades,
      wins: s.wins,
      fills: Object.fromEntries([...reasons].sort()),
      finalBalance: s.finalBalance,
      maxDrawdown: s.maxDrawdown,
      ambiguousCandles: s.ambiguousCandles,
      ambiguousPL: s.ambiguousPL,
    }).toMatchInlineSnapshot(`
      {
        "ambiguousCandles": 0,
        "ambiguousPL": 0,
        "fills": {
          "MARKET_ORDER": 542,
          "STOP_LOSS_ORDER": 368,
          "TAKE_PROFIT_ORDER": 173,
        },
        "finalBalance": 99366.8279,
        "maxDrawdown": 789.9524,
        "trades": 541,
        "wins": 173,
      }
    `);
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as { accountBalance: string };
    expect(ledgerSum(r)).toBe(last.accountBalance);
  });
});

describe('golden: EUR account trading USD_JPY (conversion through EUR_USD, added automatically)', () => {
  it('converts every fill with the quoted factors and reproduces the pinned figures', async () => {
    const r = await run('strategies/breakout-tpsl.ts', ['instrument=USD_JPY', 'granularity=H1'], { account: { currency: 'EUR' } });
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as {
      pl: string; gainQuoteHomeConversionFactor: string; lossQuoteHomeConversionFactor: string; tradesClosed?: { units: string; price: string; realizedPL: string }[];
    }[];
    expect(fills.length).toBeGreaterThan(100);
    for (const f of fills) {
      const gain = Number(f.gainQuoteHomeConversionFactor);
      const loss = Number(f.lossQuoteHomeConversionFactor);
      // JPY -> EUR: about 1/160, and the loss factor is the worse (larger) one.
      expect(gain).toBeGreaterThan(0.004);
      expect(gain).toBeLessThan(0.008);
      expect(loss).toBeGreaterThan(gain);
    }
    const s = r.summary;
    expect(s.currency).toBe('EUR');
    expect({ trades: s.trades, wins: s.wins, finalBalance: s.finalBalance, financing: s.financing, spreadCost: s.spreadCost }).toMatchInlineSnapshot(`
      {
        "finalBalance": 99786.6005,
        "financing": -83.8342,
        "spreadCost": 380.2045,
        "trades": 541,
        "wins": 178,
      }
    `);
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as { accountBalance: string };
    expect(ledgerSum(r)).toBe(last.accountBalance);
  });
});

describe('golden: EUR account trading USD_JPY and EUR_GBP at once (multi-currency)', () => {
  // An inline strategy on two pairs: SMA(12)/SMA(48) crossover per pair, each entry with a take
  // profit, a stop loss and a trailing stop; synthetic H1 candles (fixed seed), EUR_USD added for
  // the JPY → EUR conversion; EUR_GBP converts GBP → EUR by itself (inverse).
  const strategy = defineStrategy({
    name: 'two-pairs',
    description: 'golden multi-currency test',
    params: { units: 20_000 },
    subscribe: () => ({ candles: ['USD_JPY:H1:M', 'EUR_GBP:H1:M'] }),
    init: () => ({ USD_JPY: 0, EUR_GBP: 0 }) as Record<string, number>,
    onCandle(ctx, s) {
      const c = ctx.candle!;
      const fast = ctx.sma(12);
      const slow = ctx.sma(48);
      if (fast === undefined || slow === undefined) return;
      const sig = fast > slow ? 1 : -1;
      if (sig === s[c.instrument] || ctx.trades(c.instrument).length > 0) return { state: { ...s, [c.instrument]: sig } };
      const pip = c.instrument === 'USD_JPY' ? 0.01 : 0.0001;
      const intent = ctx.market(c.instrument, sig * ctx.params.units, { tp: { distance: 60 * pip }, sl: { distance: 40 * pip }, trailing: 50 * pip });
      return { state: { ...s, [c.instrument]: sig }, intents: [intent] };
    },
  });

  it('converts each pair through its own route and reproduces the pinned figures', async () => {
    const traded = new Set(['USD_JPY', 'EUR_GBP', 'EUR_USD']);
    const from = Date.UTC(2024, 0, 1);
    const to = Date.UTC(2024, 3, 1);
    const config = loadConfig(undefined, { account: { currency: 'EUR' }, run: { from: new Date(from).toISOString(), to: new Date(to).toISOString() } } as never);
    const r = await runBacktest({
      loaded: { file: 'inline', name: 'two-pairs', strategy: strategy as never, params: { units: 20_000 } },
      config,
      instruments: loadInstruments(),
      candles: (q) => syntheticCandles({ instrument: q.instrument, granularity: q.granularity, from: q.from, to: q.to, seed: 7 }),
      available: (i) => traded.has(i),
      log: silent,
      keepTransactions: true,
    });
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as { instrument: string; reason: string; gainQuoteHomeConversionFactor: string; lossQuoteHomeConversionFactor: string }[];
    const by = (i: string): typeof fills => fills.filter((f) => f.instrument === i);
    expect(by('USD_JPY').length).toBeGreaterThan(10);
    expect(by('EUR_GBP').length).toBeGreaterThan(10);
    for (const f of by('USD_JPY')) expect(Number(f.gainQuoteHomeConversionFactor)).toBeLessThan(0.01); // JPY → EUR ≈ 1/160
    for (const f of by('EUR_GBP')) expect(Number(f.gainQuoteHomeConversionFactor)).toBeGreaterThan(1.05); // GBP → EUR ≈ 1/0.86
    for (const f of fills) expect(Number(f.lossQuoteHomeConversionFactor)).toBeGreaterThan(Number(f.gainQuoteHomeConversionFactor));
    const reasons = new Set(fills.map((f) => f.reason));
    expect([...reasons].sort()).toEqual(expect.arrayContaining(['MARKET_ORDER', 'STOP_LOSS_ORDER', 'TAKE_PROFIT_ORDER', 'TRAILING_STOP_LOSS_ORDER']));
    const s = r.summary;
    expect(s.currency).toBe('EUR');
    expect({
      trades: s.trades,
      wins: s.wins,
      finalBalance: s.finalBalance,
      financing: s.financing,
      spreadCost: s.spreadCost,
      fills: { USD_JPY: by('USD_JPY').length, EUR_GBP: by('EUR_GBP').length },
      reasons: Object.fromEntries([...reasons].sort().map((x) => [x, fills.filter((f) => f.reason === x).length])),
    }).toMatchInlineSnapshot(`
      {
        "fills": {
          "EUR_GBP": 28,
          "USD_JPY": 76,
        },
        "finalBalance": 98716.8308,
        "financing": -61.0179,
        "reasons": {
          "MARKET_ORDER": 52,
          "STOP_LOSS_ORDER": 22,
          "TAKE_PROFIT_ORDER": 11,
          "TRAILING_STOP_LOSS_ORDER": 19,
        },
        "spreadCost": 94.3043,
        "trades": 52,
        "wins": 15,
      }
    `);
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as { accountBalance: string };
    expect(ledgerSum(r)).toBe(last.accountBalance);
  });
});

describe('closed trades kept or only streamed', () => {
  it('give the same summary and the same trades.csv; only the kept run holds the list', async () => {
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { tradesCsv } = await import('../src/cli/backtest.ts');
    const config = loadConfig(undefined, {});
    const loaded = await loadStrategy(resolve(import.meta.dirname, '../strategies/breakout-tpsl.ts'), ['instrument=EUR_USD', 'granularity=H1']);
    const go = (keepTrades: boolean, runDir: string): Promise<BacktestResult> =>
      runBacktest({ loaded, config, instruments: loadInstruments(), candles: (r) => catalog.candles(r), available: (i, g) => catalog.has(i, g), log: silent, keepTrades, runDir });
    const keptDir = join(mkdtempSync(join(tmpdir(), 'fxflow-kept-')), 'run');
    const streamedDir = join(mkdtempSync(join(tmpdir(), 'fxflow-streamed-')), 'run');
    const kept = await go(true, keptDir);
    const streamed = await go(false, streamedDir);
    expect(kept.summary.trades).toBeGreaterThan(20);
    expect(kept.trades).toHaveLength(kept.summary.trades);
    expect(streamed.trades).toEqual([]);
    expect(streamed.summary).toEqual(kept.summary);
    const csv = readFileSync(join(streamedDir, 'trades.csv'), 'utf8');
    expect(csv).toBe(readFileSync(join(keptDir, 'trades.csv'), 'utf8'));
    expect(csv).toBe(tradesCsv(kept.trades));
    expect(csv.trim().split('\n')).toHaveLength(kept.summary.trades + 1);
  });
});
