import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newNotices, openCandles, openTicks } from '../src/adapters/catalog/formats.ts';
import { runBacktest } from '../src/app/backtest.ts';
import { loadConfig } from '../src/app/config.ts';
import { fileSource } from '../src/app/sources.ts';
import { loadStrategy } from '../src/app/load-strategy.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import type { Candle } from '../src/domain/candle.ts';
import { FX, HAS_SHARED, warnIfNoShared } from './shared.ts';

warnIfNoShared('real FX data (importers and a backtest on OANDA EUR_USD H1 bid/ask)');

async function collect(
  src: AsyncIterable<readonly Candle[]>,
): Promise<{ n: number; first: Candle | undefined; last: Candle | undefined }> {
  let n = 0;
  let first: Candle | undefined;
  let last: Candle | undefined;
  for await (const b of src) {
    if (b.length === 0) continue;
    first ??= b[0];
    last = b[b.length - 1];
    n += b.length;
  }
  return { n, first, last };
}

const iso = (t: number | undefined): string | undefined =>
  t === undefined ? undefined : new Date(t).toISOString();

describe.skipIf(!HAS_SHARED)('importers on the real files of ../shared/data/fx', () => {
  it('Lean hour bid/ask: 74,439 rows, 2007-01-01 21:00 → 2018-12-31 21:00 UTC', async () => {
    const r = await collect(
      openCandles(join(FX, 'quantconnect-lean-oanda/hour/eurusd.csv'), {
        instrument: 'EUR_USD',
        granularity: 'H1',
      }),
    );
    expect(r.n).toBe(74_439);
    expect(iso(r.first?.time)).toBe('2007-01-01T21:00:00.000Z');
    expect(iso(r.last?.time)).toBe('2018-12-31T21:00:00.000Z');
    expect(r.first!.ao).toBeGreaterThan(r.first!.bo);
  });

  it('Lean minute files: ms since midnight of the file date, a folder read in date order', async () => {
    const r = await collect(
      openCandles(join(FX, 'quantconnect-lean-oanda/minute/eurusd/20140501_eurusd_minute_quote.csv'), {
        instrument: 'EUR_USD',
        granularity: 'M1',
      }),
    );
    expect(r.n).toBe(1363);
    expect(iso(r.first?.time)?.slice(0, 10)).toBe('2014-05-01');
    const all = await collect(
      openCandles(join(FX, 'quantconnect-lean-oanda/minute/eurusd'), {
        instrument: 'EUR_USD',
        granularity: 'M1',
      }),
    );
    expect(all.n).toBe(18_184);
    expect(iso(all.last?.time)?.slice(0, 10)).toBe('2018-04-04');
  });

  it('HistData M1 (EST, bid only): 372,530 rows less 60 exact duplicates; 17:02 EST is 22:02 UTC; ask from the spread model', async () => {
    const notices = newNotices();
    const r = await collect(
      openCandles(join(FX, 'histdata-m1-ffml/DAT_ASCII_EURUSD_M1_2019.csv'), {
        instrument: 'EUR_USD',
        granularity: 'M1',
        spread: { kind: 'fixed', pips: 1 },
        notices,
      }),
    );
    expect(notices.duplicates).toBe(60);
    expect(r.n).toBe(372_530 - 60);
    expect(iso(r.first?.time)).toBe('2019-01-01T22:02:00.000Z');
    expect(r.first!.ao - r.first!.bo).toBeCloseTo(0.0001, 10);
  });

  it('OANDA candle JSON (bid, ask and mid): 180 complete candles, streamed', async () => {
    const r = await collect(
      openCandles(join(FX, 'tacchang-oanda-json/USD_JPY_M1_20180409_0000.json'), {
        instrument: 'USD_JPY',
        granularity: 'M1',
      }),
    );
    expect(r.n).toBe(180);
    expect(iso(r.first?.time)).toBe('2018-04-09T00:00:00.000Z');
    expect(r.first!.ac).toBeGreaterThanOrEqual(r.first!.bc);
  });

  it('OANDA mid CSV: 5,000 rows', async () => {
    const r = await collect(
      openCandles(join(FX, 'jtang-oanda-mid-csv/EUR_USD_H1.csv'), {
        instrument: 'EUR_USD',
        granularity: 'H1',
      }),
    );
    expect(r.n).toBe(5000);
    expect(iso(r.first?.time)).toBe('2019-11-08T12:00:00.000Z');
  });

  it('Lean ticks: ms since midnight, bid and ask', async () => {
    let n = 0;
    let first: number | undefined;
    for await (const b of openTicks(
      join(FX, 'quantconnect-lean-oanda/tick/eurusd/20140501_eurusd_tick_quote.csv'),
      { instrument: 'EUR_USD' },
    )) {
      first ??= b[0]?.at;
      n += b.length;
    }
    expect(n).toBeGreaterThan(10_000);
    expect(iso(first)?.slice(0, 10)).toBe('2014-05-01');
  });
});

describe.skipIf(!HAS_SHARED)('a backtest over real OANDA EUR_USD H1 bid/ask (Lean hour file, 2017)', () => {
  it('runs sma-cross on the real file and reproduces the pinned figures', async () => {
    const instruments = loadInstruments();
    const config = loadConfig(undefined, {
      run: { instrument: 'EUR_USD', granularity: 'H1', from: '2017-01-01', to: '2018-01-01' },
    });
    const loaded = await loadStrategy(join(import.meta.dirname, '../strategies/sma-cross.ts'), [
      'instrument=EUR_USD',
      'granularity=H1',
    ]);
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    const r = await runBacktest({
      loaded,
      config,
      instruments,
      candles: fileSource(
        join(FX, 'quantconnect-lean-oanda/hour/eurusd.csv'),
        undefined,
        config,
        instruments,
      ),
      log: silent,
      keepTransactions: true,
    });
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as {
      price: string;
      units: string;
      time: string;
    }[];
    expect(fills.length).toBeGreaterThan(50);
    // Every fill is inside 2017 and priced with 5 decimals.
    expect(fills.every((f) => /^\d\.\d{5}$/.test(f.price) && f.time.startsWith('2017'))).toBe(true);
    const s = r.summary;
    expect({
      trades: s.trades,
      wins: s.wins,
      finalBalance: s.finalBalance,
      maxDrawdown: s.maxDrawdown,
      spreadCost: s.spreadCost,
      candles: r.engine.candles,
    }).toMatchInlineSnapshot(`
      {
        "candles": 6155,
        "finalBalance": 99505.9687,
        "maxDrawdown": 1393.5146,
        "spreadCost": 297.3,
        "trades": 209,
        "wins": 80,
      }
    `);
  });
});

describe.skipIf(!HAS_SHARED)('a backtest on real OANDA EUR_USD ticks (Lean tick files, May 2014)', () => {
  it('drives fills tick by tick: market orders fill at the next tick, TP and SL at their levels', async () => {
    const instruments = loadInstruments();
    // The fill figures below are the simulator's alone: the default orders-per-minute limit is off here
    // (tick-momentum decides more than 60 openings in some minutes of May 2014; the last test of this
    // block runs it with the default limits).
    const config = loadConfig(undefined, {
      run: { instrument: 'EUR_USD', granularity: 'M1', from: '2014-05-01', to: '2014-05-03' },
      risk: { maxOrdersPerMinute: 0 },
    } as never);
    const loaded = await loadStrategy(join(import.meta.dirname, '../strategies/tick-momentum.ts'), []);
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    const ticksDir = join(FX, 'quantconnect-lean-oanda/tick/eurusd');
    const r = await runBacktest({
      loaded,
      config,
      instruments,
      candles: () => {
        throw new Error('no candles expected');
      },
      ticks: (req) => openTicks(ticksDir, req),
      log: silent,
      keepTransactions: true,
    });
    const fills = r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as {
      reason: string;
      price: string;
      fullPrice: { closeoutBid: string; closeoutAsk: string };
      units: string;
    }[];
    expect(fills.length).toBeGreaterThan(20);
    for (const f of fills) {
      // A tick fill is at the tick's own bid or ask: the quote it filled on.
      if (f.reason === 'MARKET_ORDER')
        expect(f.price).toBe(Number(f.units) > 0 ? f.fullPrice.closeoutAsk : f.fullPrice.closeoutBid);
    }
    const s = r.summary;
    expect({
      ticks: r.engine.events,
      trades: s.trades,
      wins: s.wins,
      finalBalance: s.finalBalance,
      spreadCost: s.spreadCost,
    }).toMatchInlineSnapshot(`
      {
        "finalBalance": 99917.3,
        "spreadCost": 69.5,
        "ticks": 73520,
        "trades": 44,
        "wins": 15,
      }
    `);
  });

  it('under the default limits the same run is refused the openings past 60 a minute of market time, and says so', async () => {
    const config = loadConfig(undefined, {
      run: { instrument: 'EUR_USD', granularity: 'M1', from: '2014-05-01', to: '2014-05-03' },
    });
    const loaded = await loadStrategy(join(import.meta.dirname, '../strategies/tick-momentum.ts'), []);
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    const ticksDir = join(FX, 'quantconnect-lean-oanda/tick/eurusd');
    const r = await runBacktest({
      loaded,
      config,
      instruments: loadInstruments(),
      candles: () => {
        throw new Error('no candles expected');
      },
      ticks: (req) => openTicks(ticksDir, req),
      log: silent,
    });
    const s = r.summary as typeof r.summary & {
      riskRefusals: number;
      risk: { limits: Record<string, number>; refused: Record<string, number> };
    };
    expect(s.risk.limits).toEqual({ maxOrdersPerMinute: 60, maxIntentsPerEvent: 50 });
    expect({ trades: s.trades, refusals: s.riskRefusals, refused: s.risk.refused }).toEqual({
      trades: 43,
      refusals: 253,
      refused: { maxOrdersPerMinute: 253 },
    });
  });
});

describe.skipIf(!HAS_SHARED)(
  'the exact path model on real OANDA EUR_USD minutes and their ticks (Lean, May 2014)',
  () => {
    it('matches each candle on its own ticks: every take-profit and stop-loss fill happens at a real tick', async () => {
      const instruments = loadInstruments();
      const leanMinutes = join(FX, 'quantconnect-lean-oanda/minute/eurusd');
      const ticksDir = join(FX, 'quantconnect-lean-oanda/tick/eurusd');
      const tickTimes = new Set<number>();
      for await (const b of openTicks(ticksDir, {
        instrument: 'EUR_USD',
        from: Date.parse('2014-05-01'),
        to: Date.parse('2014-05-03'),
      }))
        for (const k of b) tickTimes.add(k.at);
      const loaded = await loadStrategy(join(import.meta.dirname, '../strategies/breakout-tpsl.ts'), [
        'granularity=M1',
        'lookback=30',
        'tpAtr=3',
        'slAtr=2',
      ]);
      const silent = { debug() {}, info() {}, warn() {}, error() {} };
      const run = async (path: 'adaptive' | 'exact') => {
        const config = loadConfig(undefined, {
          run: { instrument: 'EUR_USD', granularity: 'M1', from: '2014-05-01', to: '2014-05-03' },
          fill: { path },
        });
        return runBacktest({
          loaded,
          config,
          instruments,
          candles: fileSource(leanMinutes, undefined, config, instruments),
          ticks: (req) => openTicks(ticksDir, req),
          log: silent,
          keepTransactions: true,
        });
      };
      const exact = await run('exact');
      const adaptive = await run('adaptive');
      const exits = (r: typeof exact) =>
        (
          r.transactions.filter((t) => t.type === 'ORDER_FILL') as unknown as {
            reason: string;
            time: string;
          }[]
        ).filter((f) => f.reason === 'TAKE_PROFIT_ORDER' || f.reason === 'STOP_LOSS_ORDER');
      const exactExits = exits(exact);
      expect(exactExits.length).toBeGreaterThan(5);
      // Exact: each exit is at a tick's time. Adaptive: at the synthetic path points (:00, :20, :40, :60 s).
      for (const f of exactExits) expect(tickTimes.has(Date.parse(f.time))).toBe(true);
      expect(exits(adaptive).every((f) => Date.parse(f.time) % 20_000 === 0)).toBe(true);
      const pick = (r: typeof exact) => ({
        trades: r.summary.trades,
        wins: r.summary.wins,
        finalBalance: r.summary.finalBalance,
      });
      expect({ exact: pick(exact), adaptive: pick(adaptive) }).toMatchInlineSnapshot(`
      {
        "adaptive": {
          "finalBalance": 99842.9,
          "trades": 103,
          "wins": 11,
        },
        "exact": {
          "finalBalance": 99839.2,
          "trades": 103,
          "wins": 11,
        },
      }
    `);
    });
  },
);
