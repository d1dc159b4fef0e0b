import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import type { Tick } from '../../domain/tick.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import { weekendClosure } from './broker.ts';
import { MINUTE, T0, candle, f, harness, market, pending, type Harness } from './testkit.ts';

const EU = 'EUR_USD';
const SECOND = 1000;
const tick = (at: number, bid: number, spread = 0.0002): Tick => ({
  kind: 'tick',
  instrument: EU,
  at,
  bid: Math.round(bid * 1e5) / 1e5,
  ask: Math.round((bid + spread) * 1e5) / 1e5,
});
const flat = (time: number, bid = 1.1, spread = 0.0002): Candle =>
  candle(EU, time, [bid, bid, bid, bid], spread);
const kinds = (out: readonly Transaction[]): unknown[][] =>
  out.map((t) => [t.type, f(t, 'rejectReason') ?? f(t, 'reason')]);
const tradeIDs = (h: Harness): string[] => [...h.sim.ledger.trades.keys()];

describe('FIFO accounts (fifo: true, NFA rule 2-43b)', () => {
  it('closes trades of the same size oldest first: closing the newer of two is cancelled with FIFO_VIOLATION', () => {
    for (const fifo of [true, false]) {
      const h = harness({ fifo });
      h.submit(market(EU, '100'));
      h.feed(flat(T0));
      h.submit(market(EU, '100'));
      h.feed(flat(T0 + MINUTE));
      const [older, newer] = tradeIDs(h);
      h.submit({ kind: 'closeTrade', id: 'c', tradeSpecifier: newer!, units: 'ALL' });
      const out = h.feed(flat(T0 + 2 * MINUTE));
      if (fifo) {
        expect(kinds(out)).toEqual([
          ['MARKET_ORDER', 'TRADE_CLOSE'],
          ['ORDER_CANCEL', 'FIFO_VIOLATION'],
        ]);
        expect(f(out[1], 'orderID')).toBe(out[0]!.id);
        expect(tradeIDs(h)).toEqual([older, newer]);
        // The oldest may close.
        h.submit({ kind: 'closeTrade', id: 'c2', tradeSpecifier: older!, units: 'ALL' });
        expect(kinds(h.feed(flat(T0 + 3 * MINUTE)))).toEqual([
          ['MARKET_ORDER', 'TRADE_CLOSE'],
          ['ORDER_FILL', 'MARKET_ORDER_TRADE_CLOSE'],
        ]);
        expect(tradeIDs(h)).toEqual([newer]);
      } else {
        expect(kinds(out)).toEqual([
          ['MARKET_ORDER', 'TRADE_CLOSE'],
          ['ORDER_FILL', 'MARKET_ORDER_TRADE_CLOSE'],
        ]);
      }
    }
  });

  it('a trade opened with exits must have a size no other open trade has', () => {
    const h = harness({ fifo: true });
    h.submit(market(EU, '100', { stopLossOnFill: { distance: '0.00500' } }));
    h.feed(flat(T0));
    h.submit(market(EU, '100', { takeProfitOnFill: { price: '1.20000' } }));
    expect(kinds(h.feed(flat(T0 + MINUTE)))).toEqual([
      ['MARKET_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'FIFO_VIOLATION'],
    ]);
    h.submit(market(EU, '100', { trailingStopLossOnFill: { distance: '0.00500' } }));
    expect(kinds(h.feed(flat(T0 + 2 * MINUTE)))).toEqual([
      ['MARKET_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'FIFO_VIOLATION'],
    ]);
    // Another size, or the same size without exits, is fine.
    h.submit(market(EU, '101', { takeProfitOnFill: { price: '1.20000' } }));
    expect(kinds(h.feed(flat(T0 + 3 * MINUTE))).map((k) => k[0])).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
      'TAKE_PROFIT_ORDER',
    ]);
    h.submit(market(EU, '100'));
    expect(kinds(h.feed(flat(T0 + 4 * MINUTE))).map((k) => k[0])).toEqual(['MARKET_ORDER', 'ORDER_FILL']);
    expect(h.sim.ledger.trades.size).toBe(3);
  });

  it('an exit of a newer trade with an older twin is cancelled with FIFO_VIOLATION when it triggers', () => {
    for (const fifo of [true, false]) {
      const h = harness({ fifo });
      h.submit(market(EU, '100'));
      h.feed(flat(T0));
      h.submit(market(EU, '100'));
      h.feed(flat(T0 + MINUTE));
      const [, newer] = tradeIDs(h);
      const [tp] = h.submit({
        kind: 'tradeOrders',
        id: 'x',
        tradeSpecifier: newer!,
        takeProfit: { price: '1.10100' } as never,
      });
      const out = h.feed(candle(EU, T0 + 2 * MINUTE, [1.1, 1.1015, 1.1, 1.101]));
      expect(kinds(out)).toEqual([
        fifo ? ['ORDER_CANCEL', 'FIFO_VIOLATION'] : ['ORDER_FILL', 'TAKE_PROFIT_ORDER'],
      ]);
      expect(f(out[0], 'orderID')).toBe(tp!.id);
      expect(h.sim.ledger.trades.size).toBe(fifo ? 2 : 1);
    }
  });

  it('never hedges: DEFAULT reduces even on a hedging account, and OPEN_ONLY against a position is cancelled', () => {
    const h = harness({ fifo: true, hedging: true });
    h.submit(market(EU, '100'));
    h.feed(flat(T0));
    h.submit(market(EU, '-100'));
    const out = h.feed(flat(T0 + MINUTE));
    expect(f(out[1], 'tradesClosed')).toHaveLength(1);
    expect(h.sim.ledger.trades.size).toBe(0);
    h.submit(market(EU, '100'));
    h.feed(flat(T0 + 2 * MINUTE));
    h.submit(market(EU, '-50', { positionFill: 'OPEN_ONLY' }));
    expect(kinds(h.feed(flat(T0 + 3 * MINUTE)))).toEqual([
      ['MARKET_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'FIFO_VIOLATION'],
    ]);
    // Without fifo, the hedging account opens the short beside the long.
    const g = harness({ hedging: true });
    g.submit(market(EU, '100'));
    g.feed(flat(T0));
    g.submit(market(EU, '-50', { positionFill: 'OPEN_ONLY' }));
    g.feed(flat(T0 + MINUTE));
    expect(g.sim.ledger.trades.size).toBe(2);
  });
});

describe('market hours: MARKET_HALTED', () => {
  const FRIDAY_CLOSE = Date.UTC(2024, 0, 5, 22, 0); // Friday 17:00 New York (EST)
  const SUNDAY_OPEN = Date.UTC(2024, 0, 7, 22, 0); // Sunday 17:00 New York

  it('the weekend closure runs from Friday 17:00 to Sunday 17:00 New York, daylight saving included', () => {
    expect(weekendClosure(Date.UTC(2024, 0, 3))).toEqual({ from: FRIDAY_CLOSE, to: SUNDAY_OPEN });
    expect(weekendClosure(Date.UTC(2024, 0, 6, 12))).toEqual({ from: FRIDAY_CLOSE, to: SUNDAY_OPEN });
    // July: EDT, so 21:00 UTC.
    expect(weekendClosure(Date.UTC(2024, 6, 3))).toEqual({
      from: Date.UTC(2024, 6, 5, 21),
      to: Date.UTC(2024, 6, 7, 21),
    });
    // Sunday after the open: the next weekend.
    expect(weekendClosure(SUNDAY_OPEN).from).toBe(Date.UTC(2024, 0, 12, 22));
  });

  it('a market order submitted at or after the Friday close is created and cancelled in one batch; before it, and from Sunday 17:00, it fills', () => {
    const h = harness({}, FRIDAY_CLOSE - 3 * MINUTE);
    h.feed(flat(FRIDAY_CLOSE - 2 * MINUTE)); // closes 16:59
    expect(h.submit(market(EU, '100'))).toEqual([]);
    expect(kinds(h.feed(flat(FRIDAY_CLOSE - MINUTE))).map((k) => k[0])).toEqual([
      'MARKET_ORDER',
      'ORDER_FILL',
    ]); // the last candle, 16:59 → 17:00
    const out = h.submit(market(EU, '-100', { clientExtensions: { id: 'late' } }));
    expect(kinds(out)).toEqual([
      ['MARKET_ORDER', 'CLIENT_ORDER'],
      ['ORDER_CANCEL', 'MARKET_HALTED'],
    ]);
    expect(out[1]!.batchID).toBe(out[0]!.id);
    expect(f(out[1], 'orderID')).toBe(out[0]!.id);
    expect(f(out[1], 'clientOrderID')).toBe('late');
    expect(out[0]!.time).toBe('2024-01-05T22:00:00.000000000Z');
    // A trade close is a market order too.
    const close = h.submit({ kind: 'closeTrade', id: 'c', tradeSpecifier: tradeIDs(h)[0]!, units: 'ALL' });
    expect(kinds(close)).toEqual([
      ['MARKET_ORDER', 'TRADE_CLOSE'],
      ['ORDER_CANCEL', 'MARKET_HALTED'],
    ]);
    // Nothing waits for Sunday's open.
    expect(h.feed(flat(SUNDAY_OPEN, 1.101))).toEqual([]);
    expect(h.submit(market(EU, '-100'))).toEqual([]);
    const fill = h.feed(flat(SUNDAY_OPEN + MINUTE, 1.102));
    expect(kinds(fill).map((k) => k[0])).toEqual(['MARKET_ORDER', 'ORDER_FILL']);
    expect(fill[1]!.time).toBe('2024-01-07T22:01:00.000000000Z');
  });

  it('marketHours: false lets a weekend order wait for the next price', () => {
    const h = harness({ marketHours: false }, FRIDAY_CLOSE - MINUTE);
    h.feed(flat(FRIDAY_CLOSE - MINUTE));
    expect(h.submit(market(EU, '100'))).toEqual([]);
    expect(kinds(h.feed(flat(SUNDAY_OPEN))).map((k) => k[0])).toEqual(['MARKET_ORDER', 'ORDER_FILL']);
  });
});

describe('triggerCondition', () => {
  // A flat candle with a 10-pip spread: bid 1.10000, mid 1.10050, ask 1.10100.
  const cases: [string, string, string, boolean][] = [
    // units, price, condition, triggers
    ['100', '1.10060', 'DEFAULT', true], // a buy compares the ask (1.10100 ≥ 1.10060)
    ['100', '1.10060', 'INVERSE', false], // … INVERSE the bid
    ['100', '1.10060', 'BID', false],
    ['100', '1.10060', 'ASK', true],
    ['100', '1.10060', 'MID', false], // 1.10050 < 1.10060
    ['100', '1.10040', 'MID', true], // 1.10050 ≥ 1.10040
    ['100', '1.10040', 'BID', false],
    ['-100', '1.10040', 'DEFAULT', true], // a sell compares the bid (1.10000 ≤ 1.10040)
    ['-100', '1.10040', 'INVERSE', false], // … INVERSE the ask
    ['-100', '1.10040', 'BID', true],
    ['-100', '1.10040', 'ASK', false],
    ['-100', '1.10040', 'MID', false],
    ['-100', '1.10060', 'MID', true],
  ];
  it.each(cases)('a STOP for %s units at %s with %s triggers: %s', (units, price, condition, fills) => {
    const h = harness();
    h.feed(flat(T0 - MINUTE, 1.1, 0.001));
    h.submit(pending('STOP', EU, units, price, { triggerCondition: condition }));
    const out = h.feed(flat(T0, 1.1, 0.001));
    expect(out.some((t) => t.type === 'ORDER_FILL')).toBe(fills);
    if (fills) expect(f(out[0], 'price')).toBe(Number(units) > 0 ? '1.10100' : '1.10000');
  });

  it("a dependent order keeps its triggerCondition (a long trade's stop loss on ASK waits for the ask)", () => {
    const h = harness();
    h.submit(market(EU, '100'));
    h.feed(flat(T0, 1.1, 0.001));
    const [sl] = h.submit({
      kind: 'tradeOrders',
      id: 'x',
      tradeSpecifier: tradeIDs(h)[0]!,
      stopLoss: { price: '1.09950', triggerCondition: 'ASK' } as never,
    });
    expect(f(sl, 'triggerCondition')).toBe('ASK');
    // The bid falls to 1.09900 (DEFAULT would trigger), the ask stays at 1.10000.
    expect(h.feed(flat(T0 + MINUTE, 1.099, 0.001))).toEqual([]);
    expect(kinds(h.feed(flat(T0 + 2 * MINUTE, 1.0985, 0.001)))).toEqual([['ORDER_FILL', 'STOP_LOSS_ORDER']]);
  });
});

describe('time in force', () => {
  const tifCases: [string, string, string | undefined][] = [
    // type, timeInForce, reject reason (undefined: accepted)
    ['MARKET', 'FOK', undefined],
    ['MARKET', 'IOC', undefined],
    ['MARKET', 'GTC', 'TIME_IN_FORCE_INVALID'],
    ['MARKET', 'GFD', 'TIME_IN_FORCE_INVALID'],
    ['LIMIT', 'GTC', undefined],
    ['LIMIT', 'GFD', undefined],
    ['LIMIT', 'FOK', undefined],
    ['LIMIT', 'IOC', undefined],
    ['STOP', 'IOC', undefined],
    ['MARKET_IF_TOUCHED', 'GFD', undefined],
    ['MARKET_IF_TOUCHED', 'FOK', 'TIME_IN_FORCE_INVALID'],
    ['MARKET_IF_TOUCHED', 'IOC', 'TIME_IN_FORCE_INVALID'],
  ];
  it.each(tifCases)('%s with %s: %s', (type, tif, reason) => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    const req: Record<string, unknown> = { type, instrument: EU, units: '100', timeInForce: tif };
    if (type !== 'MARKET') req.price = '1.05000';
    const out = h.submit({ kind: 'order', id: 'x', request: req as never });
    if (reason === undefined) expect(out.every((t) => !t.type.endsWith('_REJECT'))).toBe(true);
    else expect(kinds(out)).toEqual([[`${type}_ORDER_REJECT`, reason]]);
  });

  it.each(['FOK', 'IOC'])('dependent orders accept only GTC, GTD and GFD: %s is rejected', (tif) => {
    const h = harness();
    h.submit(market(EU, '100'));
    h.feed(flat(T0));
    const id = tradeIDs(h)[0]!;
    expect(
      kinds(
        h.submit({
          kind: 'tradeOrders',
          id: 'a',
          tradeSpecifier: id,
          takeProfit: { price: '1.20000', timeInForce: tif } as never,
        }),
      ),
    ).toEqual([['TAKE_PROFIT_ORDER_REJECT', 'TIME_IN_FORCE_INVALID']]);
    expect(
      kinds(
        h.submit({
          kind: 'tradeOrders',
          id: 'b',
          tradeSpecifier: id,
          trailingStopLoss: { distance: '0.00500', timeInForce: tif } as never,
        }),
      ),
    ).toEqual([['TRAILING_STOP_LOSS_ORDER_REJECT', 'TIME_IN_FORCE_INVALID']]);
    expect(
      kinds(h.submit(market(EU, '100', { stopLossOnFill: { distance: '0.00500', timeInForce: tif } }))),
    ).toEqual([['MARKET_ORDER_REJECT', 'STOP_LOSS_ON_FILL_TIME_IN_FORCE_INVALID']]);
  });

  it('GFD expires at the next 17:00 New York with TIME_IN_FORCE_EXPIRED, stamped at that time', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    const [created] = h.submit(pending('LIMIT', EU, '100', '1.05000', { timeInForce: 'GFD' }));
    expect(h.feed(flat(Date.UTC(2024, 0, 2, 21, 58)))).toEqual([]); // closes 21:59 UTC = 16:59 New York
    const out = h.feed(flat(Date.UTC(2024, 0, 2, 22, 30)));
    expect(kinds(out)).toEqual([['ORDER_CANCEL', 'TIME_IN_FORCE_EXPIRED']]);
    expect(f(out[0], 'orderID')).toBe(created!.id);
    expect(out[0]!.time).toBe('2024-01-02T22:00:00.000000000Z');
  });

  it('a FOK/IOC limit fills at the first price after it is created, or is cancelled there', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE));
    h.submit(pending('LIMIT', EU, '100', '1.09000', { timeInForce: 'FOK' }));
    expect(kinds(h.feed(flat(T0)))).toEqual([['ORDER_CANCEL', 'TIME_IN_FORCE_EXPIRED']]);
    h.submit(pending('LIMIT', EU, '100', '1.20000', { timeInForce: 'IOC' }));
    const out = h.feed(flat(T0 + MINUTE));
    expect(kinds(out)).toEqual([['ORDER_FILL', 'LIMIT_ORDER']]);
    expect(h.sim.ledger.pendingOrders.size).toBe(0);
  });
});

describe('limit and market-if-touched on arrival', () => {
  it('a limit that is marketable on arrival fills at the next price, at the better market price', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE, 1.1));
    h.submit(pending('LIMIT', EU, '100', '1.10500'));
    const out = h.feed(candle(EU, T0, [1.1001, 1.1003, 1.0999, 1.1002]));
    expect(kinds(out)).toEqual([['ORDER_FILL', 'LIMIT_ORDER']]);
    expect(f(out[0], 'price')).toBe('1.10030'); // the open's ask, not the limit's 1.10500
  });

  it('MIT acts as a limit below the market at creation, as a stop above it; its transaction has no initialMarketPrice (v20 defines it on the order only)', () => {
    const h = harness();
    h.feed(flat(T0 - MINUTE, 1.1));
    const [below] = h.submit(pending('MARKET_IF_TOUCHED', EU, '100', '1.09900'));
    const [above] = h.submit(pending('MARKET_IF_TOUCHED', EU, '100', '1.10200'));
    expect(below).not.toHaveProperty('initialMarketPrice');
    expect(above).not.toHaveProperty('initialMarketPrice');
    // Falls to an ask of 1.09870: the one below fills at its level, the one above does not move.
    let out = h.feed(candle(EU, T0, [1.1, 1.1001, 1.0985, 1.099]));
    expect(kinds(out)).toEqual([['ORDER_FILL', 'MARKET_IF_TOUCHED_ORDER']]);
    expect(f(out[0], 'orderID')).toBe(below!.id);
    expect(f(out[0], 'price')).toBe('1.09900');
    // Rises through 1.10200 on the ask: the one above fills at its level.
    out = h.feed(candle(EU, T0 + MINUTE, [1.099, 1.1025, 1.099, 1.102]));
    expect(kinds(out)).toEqual([['ORDER_FILL', 'MARKET_IF_TOUCHED_ORDER']]);
    expect(f(out[0], 'orderID')).toBe(above!.id);
    expect(f(out[0], 'price')).toBe('1.10200');
  });
});

describe('trade orders call: null cancels, absent leaves alone, given replaces', () => {
  it('touches only the dependent orders named in the request', () => {
    const h = harness();
    h.submit(
      market(EU, '100', {
        takeProfitOnFill: { price: '1.11000' },
        stopLossOnFill: { price: '1.09000' },
        trailingStopLossOnFill: { distance: '0.00500' },
      }),
    );
    h.feed(flat(T0));
    const id = tradeIDs(h)[0]!;
    const before = { ...h.sim.ledger.trades.get(id)! };
    // Only the take profit is given: it is replaced; the stop loss and trailing stop stay.
    let out = h.submit({
      kind: 'tradeOrders',
      id: 'a',
      tradeSpecifier: id,
      takeProfit: { price: '1.12000' } as never,
    });
    expect(kinds(out)).toEqual([
      ['ORDER_CANCEL', 'CLIENT_REQUEST_REPLACED'],
      ['TAKE_PROFIT_ORDER', 'REPLACEMENT'],
    ]);
    expect(f(out[0], 'replacedByOrderID')).toBe(out[1]!.id);
    expect(f(out[1], 'replacesOrderID')).toBe(before.takeProfitOrderID);
    let t = h.sim.ledger.trades.get(id)!;
    expect([t.takeProfitOrderID, t.stopLossOrderID, t.trailingStopLossOrderID]).toEqual([
      out[1]!.id,
      before.stopLossOrderID,
      before.trailingStopLossOrderID,
    ]);
    // null cancels the stop loss alone.
    out = h.submit({ kind: 'tradeOrders', id: 'b', tradeSpecifier: id, stopLoss: null });
    expect(kinds(out)).toEqual([['ORDER_CANCEL', 'CLIENT_REQUEST']]);
    expect(f(out[0], 'orderID')).toBe(before.stopLossOrderID);
    t = h.sim.ledger.trades.get(id)!;
    expect([t.stopLossOrderID, t.trailingStopLossOrderID]).toEqual([
      undefined,
      before.trailingStopLossOrderID,
    ]);
    // null on a slot that is empty does nothing; an empty request does nothing.
    expect(h.submit({ kind: 'tradeOrders', id: 'c', tradeSpecifier: id, stopLoss: null })).toEqual([]);
    expect(h.submit({ kind: 'tradeOrders', id: 'd', tradeSpecifier: id })).toEqual([]);
  });
});

describe('path model exact: the ticks inside a candle decide', () => {
  // Ticks inside the candle T0 → T0+1m: down to 1.09880 first, then up to 1.10120.
  const ticks = [
    tick(T0 + SECOND, 1.1),
    tick(T0 + 10 * SECOND, 1.0988),
    tick(T0 + 30 * SECOND, 1.1012),
    tick(T0 + 50 * SECOND, 1.1),
  ];
  const bar = candle(EU, T0, [1.1, 1.1012, 1.0988, 1.1]); // same OHLC as the ticks
  const scenario = (path: 'adaptive' | 'exact'): Transaction[] => {
    const h = harness({ path });
    h.feed(flat(T0 - MINUTE)); // the M1 series drives the strategy
    h.submit(
      market(EU, '1000', { takeProfitOnFill: { price: '1.10100' }, stopLossOnFill: { price: '1.09900' } }),
    );
    const out: Transaction[] = [];
    for (const k of ticks) out.push(...h.feed(k as never));
    out.push(...h.feed(bar));
    return out.filter((t) => t.type === 'ORDER_FILL');
  };

  it('adaptive reads the candle (high first on a tie: take profit); exact replays the ticks (stop loss first)', () => {
    const adaptive = scenario('adaptive');
    expect(adaptive.map((t) => [f(t, 'reason'), f(t, 'price')])).toEqual([
      ['MARKET_ORDER', '1.10020'],
      ['TAKE_PROFIT_ORDER', '1.10100'],
    ]);
    const exact = scenario('exact');
    expect(exact.map((t) => [f(t, 'reason'), f(t, 'price'), t.time])).toEqual([
      ['MARKET_ORDER', '1.10020', '2024-01-02T10:00:01.000000000Z'],
      // The stop was crossed between two ticks: it fills at the first price after the gap.
      ['STOP_LOSS_ORDER', '1.09880', '2024-01-02T10:00:10.000000000Z'],
    ]);
  });

  it('a candle without ticks falls back to the adaptive path', () => {
    const h = harness({ path: 'exact' });
    h.feed(flat(T0 - MINUTE));
    h.submit(
      market(EU, '1000', { takeProfitOnFill: { price: '1.10100' }, stopLossOnFill: { price: '1.09900' } }),
    );
    const out = h.feed(bar).filter((t) => t.type === 'ORDER_FILL');
    expect(out.map((t) => f(t, 'reason'))).toEqual(['MARKET_ORDER', 'TAKE_PROFIT_ORDER']);
  });
});

describe('invariants on ticks and trailing stops (fast-check)', () => {
  const walk = fc.array(fc.integer({ min: -25, max: 25 }), { minLength: 5, maxLength: 120 });

  it("trailing stops are monotone: a long trade's stop never falls, a short trade's never rises", () => {
    fc.assert(
      fc.property(walk, fc.boolean(), fc.integer({ min: 50, max: 150 }), (steps, long, distance) => {
        const h = harness();
        h.submit(
          market(EU, long ? '1000' : '-1000', {
            trailingStopLossOnFill: { distance: (distance / 1e5).toFixed(5) },
          }),
        );
        let px = 1.1;
        h.feed(flat(T0, px));
        const id = h.txs.find((t) => t.type === 'TRAILING_STOP_LOSS_ORDER')!.id;
        let prev = h.sim.triggerLevel(id)!;
        for (const [i, s] of steps.entries()) {
          const open = px;
          px = Math.round((px + s / 1e5) * 1e5) / 1e5;
          h.feed(candle(EU, T0 + (i + 1) * MINUTE, [open, Math.max(open, px), Math.min(open, px), px]));
          const level = h.sim.triggerLevel(id);
          if (level === undefined) break; // filled
          expect(long ? level >= prev : level <= prev).toBe(true);
          prev = level;
        }
      }),
      { numRuns: 150 },
    );
  });

  it("on ticks, every fill is at a tick's own side (buys at its ask, sells at its bid) or, for a guaranteed stop, its level", () => {
    fc.assert(
      fc.property(
        walk,
        fc.array(
          fc.option(
            fc.integer({ min: -3000, max: 3000 }).filter((u) => u !== 0),
            { nil: undefined, freq: 3 },
          ),
          { minLength: 120, maxLength: 120 },
        ),
        (steps, orders) => {
          const h = harness({}, T0 - SECOND);
          let bid = 1.1;
          const seen = new Map<number, Tick>();
          for (const [i, s] of steps.entries()) {
            bid += s / 1e5;
            const k = tick(T0 + i * SECOND, bid, (1 + (i % 3)) / 1e5);
            seen.set(k.at, k);
            for (const t of h.feed(k as never)) {
              if (t.type !== 'ORDER_FILL') continue;
              const at = seen.get(Date.parse(t.time))!;
              expect(f(t, 'price')).toBe((Number(f(t, 'units')) > 0 ? at.ask : at.bid).toFixed(5));
            }
            const u = orders[i];
            if (u !== undefined)
              h.submit(
                market(EU, String(u), {
                  takeProfitOnFill: { distance: '0.00020' },
                  stopLossOnFill: { distance: '0.00020' },
                }),
              );
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
