import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../domain/candle.ts';
import { CandleRecorder, DEFAULT_CANDLE_CAP } from './candle-recorder.ts';
import { readRunFolder } from './run-folder.ts';
import { MAX_EQUITY_POINTS, runModel, thinEquity } from './run-model.ts';
import { writeRunReport } from './run-report.ts';
import type { EquitySeries } from './run-folder.ts';

const MIN = 60_000;
const DAY = 86_400_000;

/**
 * A run folder of `candles` M1 candles (Mondays to Fridays), its chart candles written by the
 * backtest's own recorder, a daily equity.csv over the same days, and one trade a week.
 */
function runFolder(candles: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'fxflow-bounded-'));
  const rec = new CandleRecorder();
  const s = rec.series('EUR_USD', 'M1', 5, MIN);
  const start = Date.UTC(2010, 0, 4);
  let t = start,
    mid = 1.2,
    seed = 1;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const txs: string[] = [
    JSON.stringify({
      id: '1',
      type: 'TRANSFER_FUNDS',
      time: new Date(start).toISOString(),
      amount: '100000',
      accountBalance: '100000',
    }),
  ];
  const equity: string[] = ['time,balance,nav'];
  let id = 2,
    balance = 100_000,
    day = -1;
  for (let i = 0; i < candles; i++) {
    if (new Date(t).getUTCDay() === 6) t += 2 * DAY; // the weekend
    const o = mid,
      c = Math.round((mid + (rnd() - 0.5) * 4e-4) * 1e5) / 1e5;
    s.add({
      instrument: 'EUR_USD',
      granularity: 'M1',
      time: t,
      at: t + MIN,
      complete: true,
      volume: 1,
      bo: o,
      bh: Math.max(o, c) + 1e-4,
      bl: Math.min(o, c) - 1e-4,
      bc: c,
      ao: o + 2e-5,
      ah: Math.max(o, c) + 1.2e-4,
      al: Math.min(o, c) - 0.8e-4,
      ac: c + 2e-5,
    } as unknown as Candle);
    mid = c;
    const d = Math.floor(t / DAY);
    if (d !== day) {
      day = d;
      if (new Date(t).getUTCDay() === 1) {
        // A trade a week: opened on Monday's first candle, closed an hour later.
        const at = (x: number): string => new Date(x).toISOString();
        const opened = id;
        txs.push(
          JSON.stringify({
            id: String(id++),
            type: 'ORDER_FILL',
            time: at(t),
            instrument: 'EUR_USD',
            units: '1000',
            price: String(o),
            reason: 'MARKET_ORDER',
            tradeOpened: { tradeID: String(opened), units: '1000', price: String(o) },
            accountBalance: String(balance),
          }),
        );
        balance += 1;
        txs.push(
          JSON.stringify({
            id: String(id++),
            type: 'ORDER_FILL',
            time: at(t + 3_600_000),
            instrument: 'EUR_USD',
            units: '-1000',
            price: String(o),
            reason: 'MARKET_ORDER',
            tradesClosed: [{ tradeID: String(opened), units: '-1000', realizedPL: '1.0000' }],
            accountBalance: String(balance),
          }),
        );
      }
      equity.push(`${new Date(t).toISOString()},${balance},${balance}`);
    }
    t += MIN;
  }
  rec.write(dir);
  writeFileSync(join(dir, 'transactions.jsonl'), `${txs.join('\n')}\n`);
  writeFileSync(join(dir, 'equity.csv'), `${equity.join('\n')}\n`);
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({
      strategy: 'weekly',
      params: {},
      summary: { currency: 'USD', initialBalance: 100_000, finalNAV: balance, netPL: balance - 100_000 },
    }),
  );
  writeFileSync(join(dir, 'config.json'), '{}');
  return dir;
}

/** The data block of a report.html, parsed. */
const pageData = (file: string): { candles: { count: number; data: string }[]; equity: EquitySeries } => {
  const html = readFileSync(file, 'utf8');
  const m = /<script type="application\/json" id="fxflow-data">([\s\S]*?)<\/script>/.exec(html)!;
  return JSON.parse(m[1]!);
};

describe('report.html from bounded aggregates', () => {
  it('the chart data of a page and the model it is built from stay bounded as the run grows tenfold (candles capped per series, the equity curve capped)', () => {
    const sizes = [400_000, 4_000_000].map((n) => {
      const dir = runFolder(n);
      const model = runModel(readRunFolder(dir));
      const r = writeRunReport(dir);
      const d = pageData(r.path);
      return {
        candles: d.candles[0]!.count,
        candleBytes: d.candles[0]!.data.length,
        equity: d.equity.t.length,
        modelCandles: model.candles[0]!.count,
        trades: model.trades.length,
        bytes: r.bytes,
      };
    });
    const [year, ten] = sizes as [(typeof sizes)[0], (typeof sizes)[0]];
    expect(year.candles).toBe(400_000);
    expect(ten.candles).toBeLessThanOrEqual(DEFAULT_CANDLE_CAP);
    expect(ten.modelCandles).toBe(ten.candles);
    expect(ten.candleBytes).toBeLessThanOrEqual(year.candleBytes);
    expect(ten.equity).toBeLessThanOrEqual(MAX_EQUITY_POINTS);
    // The trades are the page's (one row each, written once): ten times the weeks, ten times the trades.
    expect(ten.trades).toBeGreaterThan(9 * year.trades);
    // All the rest of the page grows only with the trades (a few dozen bytes each here).
    expect(ten.bytes - year.bytes).toBeLessThan((ten.trades - year.trades) * 200);
  }, 120_000);

  it('thinEquity: at most the cap, every point one of the curve, the last point, the lowest and the highest NAV kept (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 1e6 }), { minLength: 1, maxLength: 30_000 }),
        fc.integer({ min: 6, max: 6000 }),
        (navs, max) => {
          const e: EquitySeries = {
            t: navs.map((_, i) => i * 86_400),
            balance: navs.map((x) => x - 1),
            nav: navs,
          };
          const got = thinEquity(e, max);
          expect(got.t.length).toBeLessThanOrEqual(Math.max(max, navs.length <= max ? navs.length : 0));
          if (navs.length <= max) expect(got).toBe(e);
          expect(got.t.at(-1)).toBe(e.t.at(-1));
          expect(Math.min(...got.nav)).toBe(Math.min(...navs));
          expect(Math.max(...got.nav)).toBe(Math.max(...navs));
          for (let i = 0; i < got.t.length; i++) {
            const k = got.t[i]! / 86_400;
            expect(got.nav[i]).toBe(navs[k]);
            expect(got.balance[i]).toBe(navs[k]! - 1);
            if (i > 0) expect(got.t[i]).toBeGreaterThan(got.t[i - 1]!);
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});
