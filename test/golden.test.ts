import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/adapters/catalog/catalog.ts';
import { syntheticCandles } from '../src/adapters/catalog/synthetic.ts';
import { runBacktest, type BacktestResult } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { loadStrategy } from '../src/app/load-strategy.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { amount, formatAmount } from '../src/domain/money.ts';
import { formatSummary } from '../src/engine/report.ts';
import { defineStrategy, type Ctx } from '../src/strategy/api.ts';

/**
 * Golden backtests on the bundled synthetic sample (deterministic: fixed generator and seed). The
 * figures are pinned: a change of fill, money or engine semantics shows up here as a diff that
 * must be explained, never silently.
 */
const catalog = new Catalog(resolve(import.meta.dirname, '../data/catalog'));
const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function run(
  strategy: string,
  params: string[],
  overrides: Record<string, Record<string, unknown>> = {},
): Promise<BacktestResult> {
  const config = loadConfig(undefined, overrides as never);
  const loaded = await loadStrategy(resolve(import.meta.dirname, '..', strategy), params);
  return runBacktest({
    loaded,
    config,
    instruments: loadInstruments(),
    candles: (r) => catalog.candles(r),
    available: (i, g) => catalog.has(i, g),
    log: silent,
    keepTransactions: true,
  });
}

function ledgerSum(r: BacktestResult): string {
  let sum = 0;
  for (const t of r.transactions) {
    const x = t as unknown as Record<string, string>;
    if (t.type === 'TRANSFER_FUNDS') sum += amount(x.amount!);
    if (t.type === 'ORDER_FILL')
      sum += amount(x.pl!) + amount(x.financing!) - amount(x.commission!) - amount(x.guaranteedExecutionFee!);
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
        "fills": 233,
        "finalBalance": 100008.9748,
        "financing": -104.4252,
        "financingTransactions": 260,
        "maxDrawdown": 568.8779,
        "netPL": -2.7252,
        "openTrades": 1,
        "sharpe": 0.0002,
        "spreadCost": 217.8,
        "trades": 232,
        "transactions": 736,
        "wins": 82,
      }
    `);
    // The balance is the exact sum of the transactions.
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as {
      accountBalance: string;
    };
    expect(ledgerSum(r)).toBe(last.accountBalance);
  });
});

describe('golden: classic reference configuration', () => {
  it('mid candles, zero spread, next-open market fills, long-only, fixed units', async () => {
    const r = await run(
      'strategies/sma-cross.ts',
      ['instrument=EUR_USD', 'granularity=H1', 'longOnly=true'],
      { data: { spread: 'mid' }, costs: { financing: false } },
    );
    const s = r.summary;
    expect(s.spreadCost).toBe(0);
    expect(s.financing).toBe(0);
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as {
      units: string;
      halfSpreadCost: string;
    }[];
    // Long-only with fixed units: every fill is +10000 (entry) or -10000 (exit).
    expect(new Set(fills.map((f) => f.units))).toEqual(new Set(['10000', '-10000']));
    expect(fills.every((f) => f.halfSpreadCost === '0.0000')).toBe(true);
    expect({ trades: s.trades, wins: s.wins, finalBalance: s.finalBalance, maxDrawdown: s.maxDrawdown })
      .toMatchInlineSnapshot(`
        {
          "finalBalance": 100096.3,
          "maxDrawdown": 544.3,
          "trades": 116,
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
          "MARKET_ORDER": 537,
          "STOP_LOSS_ORDER": 366,
          "TAKE_PROFIT_ORDER": 170,
        },
        "finalBalance": 99320.5062,
        "maxDrawdown": 817.6741,
        "trades": 536,
        "wins": 170,
      }
    `);
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as {
      accountBalance: string;
    };
    expect(ledgerSum(r)).toBe(last.accountBalance);
  });
});

describe('golden: EUR account trading USD_JPY (conversion through EUR_USD, added automatically)', () => {
  it('converts every fill with the quoted factors and reproduces the pinned figures', async () => {
    const r = await run('strategies/breakout-tpsl.ts', ['instrument=USD_JPY', 'granularity=H1'], {
      account: { currency: 'EUR' },
    });
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as {
      pl: string;
      gainQuoteHomeConversionFactor: string;
      lossQuoteHomeConversionFactor: string;
      tradesClosed?: { units: string; price: string; realizedPL: string }[];
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
    expect({
      trades: s.trades,
      wins: s.wins,
      finalBalance: s.finalBalance,
      financing: s.financing,
      spreadCost: s.spreadCost,
    }).toMatchInlineSnapshot(`
      {
        "finalBalance": 99848.7052,
        "financing": -86.207,
        "spreadCost": 377.6825,
        "trades": 537,
        "wins": 178,
      }
    `);
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as {
      accountBalance: string;
    };
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
      if (sig === s[c.instrument] || ctx.trades(c.instrument).length > 0)
        return { state: { ...s, [c.instrument]: sig } };
      const pip = c.instrument === 'USD_JPY' ? 0.01 : 0.0001;
      const intent = ctx.market(c.instrument, sig * ctx.params.units, {
        tp: { distance: 60 * pip },
        sl: { distance: 40 * pip },
        trailing: 50 * pip,
      });
      return { state: { ...s, [c.instrument]: sig }, intents: [intent] };
    },
  });

  it('converts each pair through its own route and reproduces the pinned figures', async () => {
    const traded = new Set(['USD_JPY', 'EUR_GBP', 'EUR_USD']);
    const from = Date.UTC(2024, 0, 1);
    const to = Date.UTC(2024, 3, 1);
    const config = loadConfig(undefined, {
      account: { currency: 'EUR' },
      run: { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    } as never);
    const r = await runBacktest({
      loaded: { file: 'inline', name: 'two-pairs', strategy: strategy as never, params: { units: 20_000 } },
      config,
      instruments: loadInstruments(),
      candles: (q) =>
        syntheticCandles({
          instrument: q.instrument,
          granularity: q.granularity,
          from: q.from,
          to: q.to,
          seed: 7,
        }),
      available: (i) => traded.has(i),
      log: silent,
      keepTransactions: true,
    });
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as {
      instrument: string;
      reason: string;
      gainQuoteHomeConversionFactor: string;
      lossQuoteHomeConversionFactor: string;
    }[];
    const by = (i: string): typeof fills => fills.filter((f) => f.instrument === i);
    expect(by('USD_JPY').length).toBeGreaterThan(10);
    expect(by('EUR_GBP').length).toBeGreaterThan(10);
    for (const f of by('USD_JPY')) expect(Number(f.gainQuoteHomeConversionFactor)).toBeLessThan(0.01); // JPY → EUR ≈ 1/160
    for (const f of by('EUR_GBP')) expect(Number(f.gainQuoteHomeConversionFactor)).toBeGreaterThan(1.05); // GBP → EUR ≈ 1/0.86
    for (const f of fills)
      expect(Number(f.lossQuoteHomeConversionFactor)).toBeGreaterThan(
        Number(f.gainQuoteHomeConversionFactor),
      );
    const reasons = new Set(fills.map((f) => f.reason));
    expect([...reasons].sort()).toEqual(
      expect.arrayContaining([
        'MARKET_ORDER',
        'STOP_LOSS_ORDER',
        'TAKE_PROFIT_ORDER',
        'TRAILING_STOP_LOSS_ORDER',
      ]),
    );
    const s = r.summary;
    expect(s.currency).toBe('EUR');
    expect({
      trades: s.trades,
      wins: s.wins,
      finalBalance: s.finalBalance,
      financing: s.financing,
      spreadCost: s.spreadCost,
      fills: { USD_JPY: by('USD_JPY').length, EUR_GBP: by('EUR_GBP').length },
      reasons: Object.fromEntries(
        [...reasons].sort().map((x) => [x, fills.filter((f) => f.reason === x).length]),
      ),
    }).toMatchInlineSnapshot(`
      {
        "fills": {
          "EUR_GBP": 26,
          "USD_JPY": 76,
        },
        "finalBalance": 98825.0846,
        "financing": -61.0179,
        "reasons": {
          "MARKET_ORDER": 51,
          "STOP_LOSS_ORDER": 22,
          "TAKE_PROFIT_ORDER": 12,
          "TRAILING_STOP_LOSS_ORDER": 17,
        },
        "spreadCost": 91.3209,
        "trades": 51,
        "wins": 15,
      }
    `);
    const last = [...r.transactions].reverse().find((t) => 'accountBalance' in t) as unknown as {
      accountBalance: string;
    };
    expect(ledgerSum(r)).toBe(last.accountBalance);
    // The report's splits agree with the transactions: exits by the closing fills' reasons, trades by
    // instrument and direction.
    const closing = r.transactions.filter(
      (t) => t.type === 'ORDER_FILL' && (t as unknown as { tradesClosed?: unknown[] }).tradesClosed,
    ) as unknown as { reason: string; instrument: string; tradesClosed: unknown[] }[];
    const closedBy = (reason: string): number =>
      closing.filter((f) => f.reason === reason).reduce((n, f) => n + f.tradesClosed.length, 0);
    expect(s.exitReasons).toEqual({
      ...(closedBy('STOP_LOSS_ORDER') ? { STOP_LOSS: closedBy('STOP_LOSS_ORDER') } : {}),
      ...(closedBy('TAKE_PROFIT_ORDER') ? { TAKE_PROFIT: closedBy('TAKE_PROFIT_ORDER') } : {}),
      ...(closedBy('TRAILING_STOP_LOSS_ORDER')
        ? { TRAILING_STOP: closedBy('TRAILING_STOP_LOSS_ORDER') }
        : {}),
      ...(closedBy('MARKET_ORDER') ? { STRATEGY_ORDER: closedBy('MARKET_ORDER') } : {}),
    });
    expect(Object.keys(s.byInstrument).sort()).toEqual(['EUR_GBP', 'USD_JPY']);
    expect(s.byInstrument.USD_JPY!.trades + s.byInstrument.EUR_GBP!.trades).toBe(s.trades);
    expect(s.long.trades + s.short.trades).toBe(s.trades);
    expect(s.long.wins + s.short.wins).toBe(s.wins);
    const groupsPL = s.long.netPL + s.short.netPL;
    expect(groupsPL).toBeCloseTo(
      r.trades.reduce((a, t) => a + t.realizedPL + t.financing - t.commission, 0),
      3,
    );
    // Orders: every strategy order is accounted for.
    const o = s.orders!;
    expect(o.placed).toBe(o.filled + o.cancelled + o.rejected + o.pending);
    expect(o.dependent.placed).toBe(
      o.dependent.filled + o.dependent.cancelled + o.dependent.rejected + o.dependent.pending,
    );
    expect(o.warning).toBeNull();
  });
});

/** Runs an inline strategy on the bundled sample (EUR_USD and USD_JPY, H1, January 2024). */
async function inline(
  strategy: unknown,
  overrides: Record<string, Record<string, unknown>> = {},
  params: Record<string, unknown> = {},
): Promise<BacktestResult> {
  const config = loadConfig(undefined, {
    run: { from: '2024-01-01', to: '2024-02-01' },
    ...overrides,
  } as never);
  return runBacktest({
    loaded: { file: 'inline', name: 'inline', strategy: strategy as never, params: params as never },
    config,
    instruments: loadInstruments(),
    candles: (r) => catalog.candles(r),
    available: (i, g) => catalog.has(i, g),
    log: silent,
    keepTransactions: true,
  });
}

describe('the report hides nothing', () => {
  // Reported: one M1 run had 84,502 of 84,505 orders rejected and the report said "3 trades".
  it('counts rejected orders with their reasons and warns when most did not fill', async () => {
    const r = await inline(
      defineStrategy({
        params: {},
        subscribe: { candles: ['EUR_USD:H1'] },
        init: () => ({ n: 0 }),
        onCandle(ctx, s) {
          const n = s.n + 1;
          // Every tenth order is valid; the others ask for a fraction of a unit (EUR_USD trades whole units).
          return { state: { n }, intents: [ctx.market('EUR_USD', n % 10 === 0 ? '1000' : '0.5')] };
        },
      }),
    );
    const o = r.summary.orders!;
    const rejects = r.transactions.filter((t) => t.type.endsWith('_REJECT')) as unknown as {
      rejectReason: string;
    }[];
    expect(rejects.length).toBeGreaterThan(100);
    expect(o.rejected).toBe(rejects.length);
    expect(o.rejectReasons[0]).toEqual({ reason: rejects[0]!.rejectReason, count: rejects.length });
    expect(o.filled).toBe(r.transactions.filter((t) => t.type === 'ORDER_FILL').length);
    expect(o.placed).toBe(o.filled + o.cancelled + o.rejected + o.pending);
    expect(o.warning).toMatch(
      new RegExp(
        `^${o.placed - o.filled} of ${o.placed} orders did not fill \\(${o.rejected} rejected, ${o.cancelled} cancelled by the account\\); leading reasons: ${rejects[0]!.rejectReason} ×${rejects.length}`,
      ),
    );
    const text = formatSummary(r.summary, 'inline');
    expect(text.split('\n')[2]).toBe(`WARNING: ${o.warning}`);
    expect(text).toMatch(
      new RegExp(
        `Orders\\s+${o.placed} placed, ${o.filled} filled, ${o.cancelled} cancelled, ${o.rejected} rejected`,
      ),
    );
  });

  // Reported: a wrong pip size on USD_JPY cancelled all 211 orders and the report said "0 trades".
  it('counts cancelled orders with their reasons: a EUR_USD-sized stop on USD_JPY', async () => {
    const r = await inline(
      defineStrategy({
        params: {},
        subscribe: { candles: ['USD_JPY:H1'] },
        onCandle(ctx) {
          if (ctx.position('USD_JPY').net !== 0) return;
          // 0.0005 is 5 pips of EUR_USD, but less than USD_JPY's price unit: the stop is at the fill price.
          return [ctx.market('USD_JPY', 1000, { sl: { distance: 0.0005 } })];
        },
      }),
    );
    const s = r.summary;
    const cancels = r.transactions.filter((t) => t.type === 'ORDER_CANCEL') as unknown as {
      reason: string;
    }[];
    const rejects = r.transactions.filter((t) => t.type.endsWith('_REJECT')) as unknown as {
      rejectReason: string;
    }[];
    const o = s.orders!;
    expect(s.trades).toBe(0);
    expect(o.filled).toBe(0);
    expect(o.placed).toBeGreaterThan(100);
    expect(o.cancelled + o.rejected).toBe(o.placed);
    const top = [...cancels.map((c) => c.reason), ...rejects.map((x) => x.rejectReason)];
    expect(o.warning).toContain(`${o.placed} of ${o.placed} orders did not fill`);
    expect(o.warning).toContain(`${top[0]} ×`);
    expect(formatSummary(s, 'x')).toContain(`WARNING: ${o.placed} of ${o.placed} orders did not fill`);
  });

  it('gives each trade its exit reason, spread cost, financing and commission; they add up to the totals', async () => {
    const r = await inline(
      defineStrategy({
        params: {},
        subscribe: { candles: ['EUR_USD:H1'] },
        init: () => ({ n: 0 }),
        onCandle(ctx, s) {
          const n = s.n + 1;
          const pos = ctx.position('EUR_USD').net;
          if (n % 30 === 0 && pos !== 0) return { state: { n }, intents: [ctx.closePosition('EUR_USD')] };
          if (pos !== 0) return { state: { n } };
          const side = n % 2 === 0 ? 1 : -1;
          return {
            state: { n },
            intents: [
              ctx.market('EUR_USD', side * 10_000, {
                tp: { distance: ctx.pips('EUR_USD', 25) },
                sl: { distance: ctx.pips('EUR_USD', 25) },
              }),
            ],
          };
        },
      }),
      { costs: { commissionPerMillion: '50' } },
    );
    const s = r.summary;
    expect(s.trades).toBeGreaterThan(20);
    const reasons = new Set(r.trades.map((t) => t.exitReason));
    expect([...reasons].sort()).toEqual(
      ['STOP_LOSS', 'STRATEGY_CLOSE', 'TAKE_PROFIT'].filter((x) => reasons.has(x as never)),
    );
    expect(reasons.has('STOP_LOSS') && reasons.has('TAKE_PROFIT')).toBe(true);
    // Trades closed and open at the end carry every fill's cost between them.
    expect(r.openAtEnd).toHaveLength(s.openTrades);
    for (const t of r.openAtEnd) expect(t.exitReason).toBe('END_OF_RUN');
    const all = [...r.trades, ...r.openAtEnd];
    const sum = (f: (t: (typeof r.trades)[number]) => number): number => all.reduce((a, t) => a + f(t), 0);
    expect(sum((t) => t.commission)).toBeCloseTo(s.commission, 3);
    expect(sum((t) => t.spreadCost)).toBeCloseTo(s.spreadCost, 3);
    expect(sum((t) => t.financing)).toBeCloseTo(s.financing, 3);
    for (const t of all) expect(t.spreadCost).toBeGreaterThan(0);
    expect(s.commission).toBeGreaterThan(0);
  });
});

describe("the strategy author's mistakes are not silent", () => {
  // Reported: an async handler was ignored (0 trades, exit 0).
  it('a handler that returns a Promise (an async handler) is a StrategyError', async () => {
    const run = inline(
      defineStrategy({
        params: {},
        subscribe: { candles: ['EUR_USD:H1'] },
        async onCandle(ctx: Ctx) {
          return [ctx.market('EUR_USD', 1000)];
        },
      } as never),
    );
    await expect(run).rejects.toMatchObject({ name: 'StrategyError', handler: 'onCandle' });
    await expect(run).rejects.toThrow(
      /strategy 'inline': onCandle at 2024-01-01T\d\d:00:00\.000Z returned a Promise: handlers are synchronous/,
    );
  });

  // Reported: ctx.indicator('RSI', {}) returned 0 for ever.
  it('an indicator without its options stops the run naming the valid ones', async () => {
    const run = inline(
      defineStrategy({
        params: {},
        subscribe: { candles: ['EUR_USD:H1'] },
        onCandle(ctx) {
          ctx.indicator('RSI', {} as never);
        },
      }),
    );
    await expect(run).rejects.toThrow(
      /strategy 'inline' threw in onCandle at .*: indicator 'RSI': option 'period' is missing; its options are \{ period: number \}/,
    );
  });
});

describe('ctx: the instrument, price helpers and recent candles', () => {
  // Reported: no pip size or instrument data in ctx; only closes were kept as history.
  it('gives the instrument definition, pips and rounding, and candles with OHLCV and both sides', async () => {
    const seen: unknown[] = [];
    const candles: import('../src/domain/candle.ts').Candle[] = [];
    await inline(
      defineStrategy({
        params: {},
        subscribe: { candles: ['USD_JPY:H1:B'] },
        onCandle(ctx) {
          candles.push(ctx.candle!);
          if (candles.length !== 40) return;
          const i = ctx.instrument('USD_JPY');
          seen.push(
            {
              pipLocation: i.pipLocation,
              pip: i.pip,
              displayPrecision: i.displayPrecision,
              minimumTradeSize: i.minimumTradeSize,
              marginRate: i.marginRate,
            },
            ctx.pips('USD_JPY', 12.5),
            ctx.toPips('USD_JPY', 150.125 - 150.0),
            ctx.round('USD_JPY', 150.12349),
            ctx.pips('EUR_USD', 10),
            ctx.candles(3),
            ctx.candles(1000).length,
          );
        },
      }),
    );
    const inst = loadInstruments().get('USD_JPY');
    expect(seen.slice(0, 5)).toEqual([
      {
        pipLocation: -2,
        pip: 0.01,
        displayPrecision: inst.displayPrecision,
        minimumTradeSize: inst.minimumTradeSize,
        marginRate: inst.marginRate,
      },
      0.125,
      12.5,
      Number((150.12349).toFixed(inst.displayPrecision)),
      0.001,
    ]);
    const last3 = candles.slice(37, 40);
    expect(seen[5]).toEqual(
      last3.map((c) => ({
        time: c.time,
        open: c.bo,
        high: c.bh,
        low: c.bl,
        close: c.bc,
        volume: c.volume,
        bid: { open: c.bo, high: c.bh, low: c.bl, close: c.bc },
        ask: { open: c.ao, high: c.ah, low: c.al, close: c.ac },
      })),
    );
    expect(seen[6]).toBe(40);
  });
});

describe('closed trades kept or only streamed', () => {
  it('give the same summary and the same trades.csv; only the kept run holds the list', async () => {
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { tradesCsv } = await import('../src/app/backtest.ts');
    const config = loadConfig(undefined, {});
    const loaded = await loadStrategy(resolve(import.meta.dirname, '../strategies/breakout-tpsl.ts'), [
      'instrument=EUR_USD',
      'granularity=H1',
    ]);
    const go = (keepTrades: boolean, runDir: string): Promise<BacktestResult> =>
      runBacktest({
        loaded,
        config,
        instruments: loadInstruments(),
        candles: (r) => catalog.candles(r),
        available: (i, g) => catalog.has(i, g),
        log: silent,
        keepTrades,
        runDir,
      });
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
