import { describe, expect, it } from 'vitest';
import { runBacktest } from '../app/backtest.ts';
import { loadConfig } from '../app/config.ts';
import type { Candle } from '../domain/candle.ts';
import { loadInstruments } from '../domain/instrument.ts';
import { nextRollover } from '../domain/new-york.ts';
import { defineStrategy } from '../strategy/api.ts';
import { sharpeOf } from './report.ts';

/**
 * Issue 25, item 7: daily figures on FX trading days. The equity curve's daily points (and so the
 * returns of Sharpe, Sortino, the deflated Sharpe and PBO) close at 17:00 New York, as OANDA's
 * daily candles and financing: each Sunday evening's hours belong to Monday, not to a day of their own.
 */
const HOUR = 3_600_000;
const FROM = Date.UTC(2024, 0, 1);
const TO = Date.UTC(2024, 1, 26); // eight weeks, across no DST change
const silent = { debug() {}, info() {}, warn() {}, error() {} };

async function* marketOnly(q: { from: number; to: number }): AsyncIterable<readonly Candle[]> {
  const hours = loadInstruments().get('EUR_USD').hours;
  const out: Candle[] = [];
  for (let t = q.from, i = 0; t < q.to; t += HOUR, i++) {
    if (!hours.isOpen(t)) continue;
    const b = 1.1 + 0.002 * Math.sin(i / 7) + 0.0001 * (i % 3);
    const r = (x: number): number => Math.round(x * 1e5) / 1e5;
    out.push({
      kind: 'candle',
      instrument: 'EUR_USD',
      granularity: 'H1',
      time: t,
      at: t + HOUR,
      bo: r(b),
      bh: r(b + 0.0005),
      bl: r(b - 0.0005),
      bc: r(b),
      ao: r(b + 0.0001),
      ah: r(b + 0.0006),
      al: r(b - 0.0004),
      ac: r(b + 0.0001),
      volume: 10,
      complete: true,
    });
  }
  yield out;
}

const holder = defineStrategy({
  name: 'holder',
  description: 'buys once and holds',
  params: {},
  subscribe: () => ({ candles: ['EUR_USD:H1'] }),
  init: () => ({ in: false }),
  onCandle(ctx, s) {
    return s.in ? undefined : { state: { in: true }, intents: [ctx.market('EUR_USD', 100_000)] };
  },
});

describe('daily figures on trading days', () => {
  it('one equity point per trading day, each at 17:00 New York; the Sunday stubs are part of Monday', async () => {
    const config = loadConfig(undefined, {
      run: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
      costs: { financing: false },
    } as never);
    const r = await runBacktest({
      loaded: { file: 'inline', name: 'holder', strategy: holder as never, params: {} },
      config,
      instruments: loadInstruments(),
      candles: marketOnly,
      available: () => true,
      log: silent,
    });
    const inner = r.equity.slice(1, -1);
    // 2024-01-01 (Monday, New Year's Day: closed, no candles) to 02-26: 39 trading days end inside
    // the period; the first point is the first mark, the last the end of the period.
    expect(inner.length).toBe(39);
    for (const e of inner)
      expect(new Date(e.time).toISOString()).toBe(new Date(nextRollover(e.time - 1)).toISOString());
    // No point on a Sunday (UTC): 8 Sundays would have been days of 2 hours each.
    expect(r.equity.filter((e) => new Date(e.time).getUTCDay() === 0)).toEqual([]);
    expect(r.summary.sharpe).toBe(Math.round(sharpeOf(r.equity.map((e) => e.nav))! * 1e4) / 1e4);
  });

  it('a run whose first mark ends a trading day has that point once (equity.csv repeated its first row)', async () => {
    // The first candle, 21:00-22:00 UTC on Tuesday 2 January (New Year's Day is closed), closes at
    // 17:00 New York: the first mark is a day's end.
    const from = Date.UTC(2024, 0, 2, 21);
    const config = loadConfig(undefined, {
      run: { from: new Date(from).toISOString(), to: new Date(TO).toISOString() },
      costs: { financing: false },
    } as never);
    const r = await runBacktest({
      loaded: { file: 'inline', name: 'holder', strategy: holder as never, params: {} },
      config,
      instruments: loadInstruments(),
      candles: marketOnly,
      available: () => true,
      log: silent,
    });
    expect(r.equity[0]!.time).toBe(from + HOUR);
    const times = r.equity.map((e) => e.time);
    expect(new Set(times).size).toBe(times.length);
  });
});
