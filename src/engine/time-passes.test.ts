import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimBroker, type SimBrokerOptions } from '../adapters/sim/broker.ts';
import { candle, instruments, MINUTE } from '../adapters/sim/testkit.ts';
import type { Candle } from '../domain/candle.ts';
import type { MarketEvent } from '../domain/events.ts';
import { parseTime } from '../domain/time.ts';
import type { Transaction } from '../domain/v20/index.ts';
import { VirtualClock } from '../ports/clock.ts';
import { defineStrategy, type Strategy } from '../strategy/api.ts';
import { Engine } from './engine.ts';
import { Portfolio } from './portfolio.ts';

/**
 * Time as it passes: a timer fires at its own time, and the simulated broker's clock stands there
 * too, so an order decided in a data gap (a weekend, a quiet hour) is stamped then, halted then
 * when the market is closed, and otherwise fills at the first price after it.
 */

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const HOUR = 60 * MINUTE;

/** Feeds `events` through the engine and the simulated broker as a backtest does (attach, feed, stop). */
function backtest(
  strategy: Strategy<Record<string, never>, unknown>,
  events: readonly MarketEvent[],
  opts: Partial<SimBrokerOptions> = {},
): Transaction[] {
  const inst = instruments();
  const sim = new SimBroker({
    instruments: inst,
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
    ...opts,
  });
  const portfolio = new Portfolio({ currency: 'USD', instruments: inst, initialBalance: '100000' });
  const txs: Transaction[] = [];
  sim.listen((t) => txs.push(t));
  const engine = new Engine({
    strategy,
    name: 'test',
    params: {},
    execution: sim,
    portfolio,
    instruments: inst,
    clock: new VirtualClock(),
    log: silent,
    marginRate: 0.02,
  });
  const detach = engine.attach();
  sim.start(events[0]!.kind === 'candle' ? events[0]!.time : events[0]!.at);
  engine.feed(events, (e) => sim.onEvent(e));
  engine.stop();
  detach();
  return txs;
}

const h1 = (time: number, bid: readonly [number, number, number, number]): Candle =>
  candle('EUR_USD', time, bid, 0.0002, 'H1', HOUR);
const iso = (t: number): string => new Date(t).toISOString();
const timeOf = (tx: Transaction): string => iso(parseTime(tx.time));

/** Buys 1000 units from the hourly timer at `when` (once). */
function timerBuy(when: number): Strategy<Record<string, never>, unknown> {
  return defineStrategy({
    params: {},
    subscribe: { candles: ['EUR_USD:H1'], timers: [{ name: 'hourly', everyMs: HOUR }] },
    onTimer: (ctx) => (ctx.now === when ? [ctx.market('EUR_USD', 1000)] : undefined),
  });
}

// The winter weekend of 2020-01-03/05: the market closes Friday 22:00 UTC (17:00 New York) and
// reopens Sunday 22:00 UTC.
const FRI_21 = Date.UTC(2020, 0, 3, 21);
const SAT_12 = Date.UTC(2020, 0, 4, 12);
const SUN_22 = Date.UTC(2020, 0, 5, 22);
const weekend: Candle[] = [
  h1(FRI_21 - HOUR, [1.1158, 1.116, 1.1155, 1.1157]),
  h1(FRI_21, [1.1157, 1.1162, 1.115, 1.1159]),
  h1(SUN_22, [1.112, 1.1125, 1.1112, 1.1116]), // the reopen bar: opens at 1.11200
  h1(SUN_22 + HOUR, [1.11165, 1.1118, 1.1114, 1.1117]),
  h1(SUN_22 + 2 * HOUR, [1.1117, 1.112, 1.1115, 1.1118]),
];

describe('timers fire at their own time', () => {
  it('a timer order at the Sunday reopen (22:00 UTC) is stamped then and fills in the first bar, at its open', () => {
    const txs = backtest(timerBuy(SUN_22), weekend);
    const order = txs.find((t) => t.type === 'MARKET_ORDER')!;
    const fill = txs.find((t) => t.type === 'ORDER_FILL')!;
    expect(timeOf(order)).toBe(iso(SUN_22));
    expect(timeOf(fill)).toBe(iso(SUN_22));
    // Bought at the first bar's ask open (bid 1.11200 + 0.00020), not the second bar's (1.11165 + 0.00020).
    expect((fill as { price?: string }).price).toBe('1.11220');
  });

  it("a Saturday timer order's MARKET_ORDER and its MARKET_HALTED cancel carry the Saturday decision time", () => {
    const txs = backtest(timerBuy(SAT_12), weekend);
    const order = txs.find((t) => t.type === 'MARKET_ORDER')!;
    const cancel = txs.find((t) => t.type === 'ORDER_CANCEL')!;
    expect((cancel as { reason?: string }).reason).toBe('MARKET_HALTED');
    expect([timeOf(order), timeOf(cancel)]).toEqual([iso(SAT_12), iso(SAT_12)]);
    expect(txs.some((t) => t.type === 'ORDER_FILL')).toBe(false);
  });

  it("an order from onStart of a strategy with timers fills at the open after the first candle, not at that candle's own open", () => {
    const strategy = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:H1'], timers: [{ name: 'hourly', everyMs: HOUR }] },
      onStart: (ctx) => [ctx.market('EUR_USD', 1000)],
    });
    const fill = backtest(strategy, weekend).find((t) => t.type === 'ORDER_FILL')!;
    expect([timeOf(fill), (fill as { price?: string }).price]).toEqual([iso(FRI_21), '1.11590']);
  });

  it('a timer inside a bar (after its open) still fills at the next bar open: the prices inside a bar have no time', () => {
    const strategy = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:H1'], timers: [{ name: 'quarter', everyMs: 15 * MINUTE }] },
      onTimer: (ctx) => (ctx.now === SUN_22 + 30 * MINUTE ? [ctx.market('EUR_USD', 1000)] : undefined),
    });
    const txs = backtest(strategy, weekend);
    const fill = txs.find((t) => t.type === 'ORDER_FILL')!;
    expect(timeOf(fill)).toBe(iso(SUN_22 + HOUR));
    expect((fill as { price?: string }).price).toBe('1.11185');
  });
});

describe('holidays are closed', () => {
  it('orders decided at 12:00 UTC on 25 December and 1 January are MARKET_HALTED, stamped then', () => {
    for (const [eve, noon] of [
      [Date.UTC(2019, 11, 24, 21), Date.UTC(2019, 11, 25, 12)],
      [Date.UTC(2019, 11, 31, 21), Date.UTC(2020, 0, 1, 12)],
    ] as const) {
      // As OANDA's candles have them: the last bar 21:00-22:00 UTC the day before, the next 22:00 on the day.
      const reopen = eve + 25 * HOUR;
      const bars = [
        h1(eve - HOUR, [1.11, 1.1105, 1.1095, 1.11]),
        h1(eve, [1.11, 1.1105, 1.1095, 1.11]),
        h1(reopen, [1.112, 1.1125, 1.1115, 1.112]),
        h1(reopen + HOUR, [1.112, 1.1125, 1.1115, 1.112]),
      ];
      const txs = backtest(timerBuy(noon), bars);
      const order = txs.find((t) => t.type === 'MARKET_ORDER')!;
      const cancel = txs.find((t) => t.type === 'ORDER_CANCEL')!;
      expect((cancel as { reason?: string }).reason, iso(noon)).toBe('MARKET_HALTED');
      expect([timeOf(order), timeOf(cancel)]).toEqual([iso(noon), iso(noon)]);
      expect(
        txs.some((t) => t.type === 'ORDER_FILL'),
        iso(noon),
      ).toBe(false);
    }
  });
});

describe('empty time changes no fill', () => {
  /** A strategy without timers: alternates long and short every `every` bars, each entry with a TP and an SL. */
  const flipper = (every: number): Strategy<Record<string, never>, unknown> =>
    defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      init: () => ({ n: 0 }),
      onCandle: (ctx, s: { n: number }) => {
        const n = s.n + 1;
        if (n % every !== 0) return { state: { n } };
        const side = (n / every) % 2 === 0 ? 1 : -1;
        const net = ctx.position('EUR_USD').net;
        const units = side * 1000 - net;
        if (units === 0) return { state: { n } };
        return {
          state: { n },
          intents: [ctx.market('EUR_USD', units, { tp: { distance: 0.0008 }, sl: { distance: 0.0006 } })],
        };
      },
    });

  /** What a fill did, without its time: the same fills whatever the clock says between the prices. */
  const fills = (txs: readonly Transaction[]): string[] =>
    txs
      .filter((t) => t.type === 'ORDER_FILL')
      .map((t) => {
        const x = t as unknown as Record<string, unknown>;
        return `${String(x.reason)} ${String(x.units)}@${String(x.price)} pl ${String(x.pl)}`;
      });

  it('inserting a gap between two candles leaves every fill of a timer-less strategy as it was (property)', () => {
    const T = Date.UTC(2024, 0, 2, 10); // a Tuesday
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -6, max: 6 }), { minLength: 8, maxLength: 60 }),
        fc.integer({ min: 1, max: 5 }),
        fc.nat(),
        fc.integer({ min: 1, max: 4 * 24 * 60 }),
        (steps, every, cut, gapMinutes) => {
          let px = 1.1;
          const bars = steps.map((d, i) => {
            const o = px;
            px = Math.round((px + d * 0.0001) * 1e5) / 1e5;
            const hi = Math.max(o, px) + 0.0003;
            const lo = Math.min(o, px) - 0.0003;
            return candle('EUR_USD', T + i * MINUTE, [
              o,
              Math.round(hi * 1e5) / 1e5,
              Math.round(lo * 1e5) / 1e5,
              px,
            ]);
          });
          const j = 1 + (cut % (bars.length - 1)); // the gap goes before bar j
          const gap = gapMinutes * MINUTE;
          const gapped = bars.map((c, i) => (i < j ? c : { ...c, time: c.time + gap, at: c.at + gap }));
          // The simulator's market hours off: the gap may reach into a weekend, which is not the point here.
          const a = fills(backtest(flipper(every), bars, { marketHours: false }));
          const b = fills(backtest(flipper(every), gapped, { marketHours: false }));
          expect(b).toEqual(a);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a timer order decided in a gap fills at the open of the first bar after it (property)', () => {
    const T = Date.UTC(2024, 0, 2, 10); // a Tuesday
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 600 }),
        fc.integer({ min: 1, max: 599 }),
        (gapMinutes, decideAt) => {
          fc.pre(decideAt < gapMinutes);
          // Bar 0 ends at T + 1 min; bar 1 opens `gapMinutes` later; the timer decides inside the gap.
          const bars = [
            candle('EUR_USD', T, [1.1, 1.1005, 1.0995, 1.1001]),
            candle('EUR_USD', T + gapMinutes * MINUTE, [1.1011, 1.1015, 1.1007, 1.1012]),
            candle('EUR_USD', T + (gapMinutes + 1) * MINUTE, [1.1021, 1.1025, 1.1017, 1.1022]),
          ];
          const when = T + MINUTE + decideAt * MINUTE; // up to bar 1's open
          const strategy = defineStrategy({
            params: {},
            subscribe: { candles: ['EUR_USD:M1'], timers: [{ name: 'minute', everyMs: MINUTE }] },
            onTimer: (ctx) => (ctx.now === when ? [ctx.market('EUR_USD', 1000)] : undefined),
          });
          const txs = backtest(strategy, bars);
          const order = txs.find((t) => t.type === 'MARKET_ORDER')!;
          const fill = txs.find((t) => t.type === 'ORDER_FILL') as unknown as Record<string, string>;
          // The market is open: the order and its fill are stamped at the price they met (v20 fills a
          // market order at once; the data has no price between), bar 1's ask open.
          expect(fill.price).toBe('1.10130');
          expect([timeOf(order), timeOf(fill as unknown as Transaction)]).toEqual([
            iso(T + gapMinutes * MINUTE),
            iso(T + gapMinutes * MINUTE),
          ]);
        },
      ),
      { numRuns: 100 },
    );
  });
});
