import { describe, expect, it } from 'vitest';
import { runBacktest } from '../src/app/backtest.ts';
import { ConfigError, loadConfig } from '../src/app/config.ts';
import type { Candle } from '../src/domain/candle.ts';
import { formatSummary } from '../src/engine/report.ts';
import { loadInstruments } from '../src/domain/instrument.ts';
import { defineStrategy } from '../src/strategy/api.ts';

/**
 * The market-hours switch reaches the simulator from the configuration: on data that trades around
 * the clock (another vendor's 24/7 feed, or synthetic), `fill.marketHours: false` (`--no-market-hours`)
 * lets every order fill; with the default, the orders decided while the FX market is closed are
 * cancelled MARKET_HALTED, and the simulator counts them.
 */

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const HOUR = 3_600_000;
const FROM = Date.UTC(2024, 0, 1);
const TO = Date.UTC(2024, 0, 29); // four weeks

/** H1 EUR_USD candles every hour of every day, weekends included (a 24/7 feed). */
async function* roundTheClock(q: { from: number; to: number }): AsyncIterable<readonly Candle[]> {
  const out: Candle[] = [];
  for (let t = q.from, i = 0; t < q.to; t += HOUR, i++) {
    const b = 1.1 + 0.001 * Math.sin(i / 5);
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
      ao: r(b + 0.0002),
      ah: r(b + 0.0007),
      al: r(b - 0.0003),
      ac: r(b + 0.0002),
      volume: 10,
      complete: true,
    });
  }
  yield out;
}

/** Flips between long and short on every candle: one market order per hour. */
const flipper = defineStrategy({
  name: 'flipper',
  description: 'one market order per candle',
  params: {},
  subscribe: () => ({ candles: ['EUR_USD:H1'] }),
  init: () => ({ n: 0 }),
  onCandle(ctx, s) {
    return { state: { n: s.n + 1 }, intents: [ctx.market('EUR_USD', s.n % 2 === 0 ? 1000 : -1000)] };
  },
});

async function run(overrides: Record<string, unknown>) {
  const config = loadConfig(undefined, {
    run: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
    ...overrides,
  } as never);
  return runBacktest({
    loaded: { file: 'inline', name: 'flipper', strategy: flipper as never, params: {} },
    config,
    instruments: loadInstruments(),
    candles: roundTheClock,
    available: () => true,
    log: silent,
    keepTransactions: true,
  });
}

describe('fill.marketHours on 24/7 data', () => {
  it('default (true): orders decided while the FX market is closed are cancelled MARKET_HALTED; false: none is, every order fills', async () => {
    const on = await run({});
    const off = await run({ fill: { marketHours: false } });
    const count = (
      r: Awaited<ReturnType<typeof run>>,
      pred: (t: Record<string, unknown>) => boolean,
    ): number => r.transactions.filter((t) => pred(t as unknown as Record<string, unknown>)).length;
    const orders = (r: Awaited<ReturnType<typeof run>>): number => count(r, (t) => t.type === 'MARKET_ORDER');
    const halted = (r: Awaited<ReturnType<typeof run>>): number =>
      count(r, (t) => t.type === 'ORDER_CANCEL' && t.reason === 'MARKET_HALTED');
    // Four weekends of 48 closed hours, and New Year's Day (closed until 17:00 New York), out of
    // four weeks of hourly orders.
    expect(orders(on)).toBeGreaterThan(600);
    expect(halted(on) / orders(on)).toBeGreaterThan(0.3);
    expect(halted(on) / orders(on)).toBeLessThan(0.33);
    expect(halted(off)).toBe(0);
    // The report says so.
    expect(on.summary.marketHalted).toBe(halted(on));
    expect(formatSummary(on.summary, 'flipper')).toMatch(
      new RegExp(`Market-halted orders\\s+${halted(on)} `),
    );
    expect(off.summary.marketHalted).toBe(0);
    expect(count(off, (t) => t.type === 'ORDER_FILL')).toBe(orders(off));
  });

  it('the configuration takes fill.marketHours as true or false and says so when it is anything else', () => {
    expect(loadConfig().fill.marketHours).toBe(true);
    expect(loadConfig(undefined, { fill: { marketHours: false } } as never).fill.marketHours).toBe(false);
    expect(() => loadConfig(undefined, { fill: { marketHours: 'off' } } as never)).toThrow(ConfigError);
    expect(() => loadConfig(undefined, { fill: { marketHours: 'off' } } as never)).toThrow(
      /fill\.marketHours must be true or false/,
    );
    expect(() => loadConfig(undefined, { fill: { marketHour: false } } as never)).toThrow(
      /did you mean "fill\.marketHours"/,
    );
  });
});

/** H1 EUR_USD candles only while the FX market is open (as OANDA's): none from Friday 17:00 to Sunday 17:00 New York. */
async function* marketOnly(q: { from: number; to: number }): AsyncIterable<readonly Candle[]> {
  const hours = loadInstruments().get('EUR_USD').hours;
  const out: Candle[] = [];
  for (let t = q.from, i = 0; t < q.to; t += HOUR, i++) {
    if (!hours.isOpen(t)) continue;
    const b = 1.1 + 0.001 * Math.sin(i / 5);
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
      ao: r(b + 0.0002),
      ah: r(b + 0.0007),
      al: r(b - 0.0003),
      ac: r(b + 0.0002),
      volume: 10,
      complete: true,
    });
  }
  yield out;
}

/** Buys 1,000 units every hour on a timer, whatever the market is doing (issue 25: a weekend timer strategy). */
const hourlyTimer = defineStrategy({
  name: 'hourly-timer',
  description: 'one market order per hourly timer',
  params: {},
  subscribe: () => ({ candles: ['EUR_USD:H1'], timers: [{ name: 'hourly', everyMs: HOUR }] }),
  init: () => ({}),
  onTimer(ctx) {
    return [ctx.market('EUR_USD', 1000)];
  },
});

describe('a closed market is closed whatever decided the order', () => {
  it("a weekend timer: every order decided while the market is closed is cancelled MARKET_HALTED, not filled at Sunday's reopen", async () => {
    const hours = loadInstruments().get('EUR_USD').hours;
    const config = loadConfig(undefined, {
      run: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
    } as never);
    const r = await runBacktest({
      loaded: { file: 'inline', name: 'hourly-timer', strategy: hourlyTimer as never, params: {} },
      config,
      instruments: loadInstruments(),
      candles: marketOnly,
      available: () => true,
      log: silent,
      keepTransactions: true,
    });
    const txs = r.transactions as unknown as Record<string, unknown>[];
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER');
    const halted = txs.filter((t) => t.type === 'ORDER_CANCEL' && t.reason === 'MARKET_HALTED');
    const fills = txs.filter((t) => t.type === 'ORDER_FILL' && t.reason === 'MARKET_ORDER');
    // Timers fire on every whole hour after the first candle (New Year's Day is closed: the data
    // starts at its close, 17:00 New York): count the hours the market was closed.
    let first = FROM;
    while (!hours.isOpen(first)) first += HOUR;
    let closedDecided = 0;
    for (let t = first + HOUR; t < TO; t += HOUR) if (!hours.isOpen(t)) closedDecided++;
    expect(halted.length).toBe(closedDecided);
    expect(fills.length + halted.length).toBe(orders.length);
    // No weekend's decisions stack up at the reopening (before: 49 fills at 2018-01-07T23:00), and
    // each timer fires at its own time: the one at the Sunday reopen fills at the first candle's
    // open, the next at the next candle's, so no two orders share a price.
    const fillTimes = new Map<string, number>();
    for (const f of fills) fillTimes.set(String(f.time), (fillTimes.get(String(f.time)) ?? 0) + 1);
    expect(Math.max(...fillTimes.values())).toBe(1);
    expect(fillTimes.get('2024-01-07T22:00:00.000000000Z')).toBe(1);
    expect(r.summary.marketHalted).toBe(closedDecided);
  });
});
