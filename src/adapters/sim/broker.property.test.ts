import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/candle.ts';
import { Decimal } from '../../domain/decimal.ts';
import { formatAmount } from '../../domain/money.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { SimBrokerOptions } from './broker.ts';
import { MINUTE, T0, candle, harness } from './testkit.ts';

const EU = 'EUR_USD';

/** A random walk of valid two-sided M1 candles (bid OHLC consistent, ask = bid + spread). */
const candlesArb = fc
  .array(
    fc.record({
      move: fc.integer({ min: -30, max: 30 }),
      up: fc.integer({ min: 0, max: 20 }),
      down: fc.integer({ min: 0, max: 20 }),
      close: fc.integer({ min: 0, max: 100 }),
      spread: fc.integer({ min: 0, max: 5 }),
    }),
    { minLength: 5, maxLength: 60 },
  )
  .map((steps) => {
    let px = 110000; // in 0.00001 units
    return steps.map((s, i) => {
      const open = px + s.move;
      const high = open + s.up;
      const low = open - s.down;
      const close = low + Math.round(((high - low) * s.close) / 100);
      px = close;
      return candle(EU, T0 + i * MINUTE, [open / 1e5, high / 1e5, low / 1e5, close / 1e5], s.spread / 1e5);
    });
  });

type Action =
  | { kind: 'market'; units: number; tp?: number; sl?: number; trail?: number; gsl?: number }
  | { kind: 'limit' | 'stop'; units: number; offset: number; tp?: number; sl?: number }
  | { kind: 'close' };

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    kind: fc.constant('market' as const),
    units: fc.integer({ min: -5000, max: 5000 }).filter((u) => u !== 0),
    tp: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    sl: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    trail: fc.option(fc.integer({ min: 50, max: 120 }), { nil: undefined }),
    gsl: fc.option(fc.integer({ min: 100, max: 200 }), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constantFrom('limit' as const, 'stop' as const),
    units: fc.integer({ min: -5000, max: 5000 }).filter((u) => u !== 0),
    offset: fc.integer({ min: 1, max: 40 }),
    tp: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
    sl: fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('close' as const) }),
);

const scenarioArb = fc.tuple(
  candlesArb,
  fc.array(fc.option(actionArb, { freq: 2, nil: undefined }), { minLength: 60, maxLength: 60 }),
);

interface Run {
  txs: Transaction[];
  fills: { tx: Record<string, unknown>; candle: Candle }[];
  orders: Map<string, Record<string, unknown>>;
  balance: string;
  position: { long: number; short: number };
}

function intentFor(a: Action, last: Candle, n: number): OrderIntent | undefined {
  const mid = (last.bc + last.ac) / 2;
  const p = (x: number): string => x.toFixed(5);
  const onFill = (units: number, ref: number, tp?: number, sl?: number): Record<string, unknown> => {
    const o: Record<string, unknown> = {};
    const dir = units > 0 ? 1 : -1;
    if (tp !== undefined) o.takeProfitOnFill = { price: p(ref + (dir * tp) / 1e5) };
    if (sl !== undefined) o.stopLossOnFill = { distance: p(sl / 1e5) };
    return o;
  };
  switch (a.kind) {
    case 'market': {
      const extra = onFill(a.units, mid, a.tp, a.sl);
      if (a.trail !== undefined) extra.trailingStopLossOnFill = { distance: p(a.trail / 1e5) };
      if (a.gsl !== undefined) extra.guaranteedStopLossOnFill = { distance: p(a.gsl / 1e5) };
      return {
        kind: 'order',
        id: `p-${n}`,
        request: { type: 'MARKET', instrument: EU, units: String(a.units), ...extra } as never,
      };
    }
    case 'limit':
    case 'stop': {
      // Limits below the market for buys (above for sells); stops the other way.
      const dir = a.units > 0 ? 1 : -1;
      const sign = a.kind === 'limit' ? -dir : dir;
      const price = mid + (sign * a.offset) / 1e5;
      return {
        kind: 'order',
        id: `p-${n}`,
        request: {
          type: a.kind.toUpperCase(),
          instrument: EU,
          units: String(a.units),
          price: p(price),
          ...onFill(a.units, price, a.tp, a.sl),
        } as never,
      };
    }
    case 'close':
      return { kind: 'closePosition', id: `p-${n}`, instrument: EU, longUnits: 'ALL', shortUnits: 'NONE' };
  }
}

function run(
  candles: readonly Candle[],
  actions: readonly (Action | undefined)[],
  opts: Partial<SimBrokerOptions> = {},
): Run {
  const h = harness(opts, T0 - MINUTE);
  const fills: Run['fills'] = [];
  const orders = new Map<string, Record<string, unknown>>();
  let n = 0;
  for (const [i, c] of candles.entries()) {
    const out = h.feed(c);
    for (const t of out) {
      const x = t as unknown as Record<string, unknown>;
      if (t.type === 'ORDER_FILL') fills.push({ tx: x, candle: c });
    }
    const a = actions[i];
    if (a) {
      const intent = intentFor(a, c, n++);
      if (intent) h.submit(intent);
    }
    for (const t of h.txs)
      if (t.type.endsWith('_ORDER')) orders.set(t.id, t as unknown as Record<string, unknown>);
  }
  return {
    txs: h.txs,
    fills,
    orders,
    balance: formatAmount(h.sim.ledger.balance),
    position: h.sim.ledger.position(EU),
  };
}

describe('simulated broker invariants (fast-check)', () => {
  it('no fill outside the candle range on its side; limits never worse than their price; stops never better than their trigger', () => {
    fc.assert(
      fc.property(scenarioArb, ([candles, actions]) => {
        const r = run(candles, actions);
        for (const { tx, candle: c } of r.fills) {
          const price = Number(tx.price);
          const buy = Number(tx.units) > 0;
          const lo = buy ? c.al : c.bl;
          const hi = buy ? c.ah : c.bh;
          if (tx.reason !== 'GUARANTEED_STOP_LOSS_ORDER') {
            // Guaranteed stops are the one exception: they fill at their level, even through a gap.
            expect(price).toBeGreaterThanOrEqual(lo - 1e-9);
            expect(price).toBeLessThanOrEqual(hi + 1e-9);
          }
          const order = r.orders.get(tx.orderID as string);
          const level = Number(order?.price);
          switch (tx.reason) {
            case 'LIMIT_ORDER':
            case 'TAKE_PROFIT_ORDER':
              expect(buy ? price <= level + 1e-9 : price >= level - 1e-9).toBe(true);
              break;
            case 'STOP_ORDER':
            case 'STOP_LOSS_ORDER':
              expect(buy ? price >= level - 1e-9 : price <= level + 1e-9).toBe(true);
              break;
            case 'GUARANTEED_STOP_LOSS_ORDER':
              expect(price).toBe(level);
              break;
            default:
              break;
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('units are conserved: the position equals the fold of the fills', () => {
    fc.assert(
      fc.property(scenarioArb, ([candles, actions]) => {
        const r = run(candles, actions);
        let net = 0;
        for (const { tx } of r.fills) {
          const opened = tx.tradeOpened as { units: string } | undefined;
          const reduced = [
            ...((tx.tradesClosed as { units: string }[] | undefined) ?? []),
            ...(tx.tradeReduced ? [tx.tradeReduced as { units: string }] : []),
          ];
          // What a fill opens and reduces adds up to its units.
          const parts =
            (opened ? Number(opened.units) : 0) + reduced.reduce((s, x) => s + Number(x.units), 0);
          expect(parts).toBe(Number(tx.units));
          net += Number(tx.units);
        }
        expect(r.position.long + r.position.short).toBe(net);
      }),
      { numRuns: 150 },
    );
  });

  it('the balance equals the initial deposit plus the realized P/L, financing and costs of the fills, exactly', () => {
    fc.assert(
      fc.property(scenarioArb, ([candles, actions]) => {
        const r = run(candles, actions);
        let expected = new Decimal('100000');
        for (const { tx } of r.fills) {
          expected = expected
            .plus(tx.pl as string)
            .plus(tx.financing as string)
            .minus(tx.commission as string)
            .minus(tx.guaranteedExecutionFee as string);
          const realized = [
            ...((tx.tradesClosed as { realizedPL: string }[] | undefined) ?? []),
            ...(tx.tradeReduced ? [tx.tradeReduced as { realizedPL: string }] : []),
          ].reduce((s, x) => s.plus(x.realizedPL), new Decimal(0));
          expect(realized.eq(tx.pl as string)).toBe(true);
        }
        expect(r.balance).toBe(expected.toFixed(4));
      }),
      { numRuns: 150 },
    );
  });

  it('transaction IDs are sequential and batches are contiguous', () => {
    fc.assert(
      fc.property(scenarioArb, ([candles, actions]) => {
        const r = run(candles, actions);
        r.txs.forEach((t, i) => expect(t.id).toBe(String(i + 1)));
        for (const t of r.txs) expect(Number(t.batchID)).toBeLessThanOrEqual(Number(t.id));
      }),
      { numRuns: 100 },
    );
  });

  it('skipping the path of candles where no order can trigger (quickPath) changes nothing, for every path model', () => {
    fc.assert(
      fc.property(
        scenarioArb,
        fc.constantFrom('adaptive' as const, 'worst' as const),
        ([candles, actions], path) => {
          const walked = JSON.stringify(run(candles, actions, { quickPath: false, path }).txs);
          expect(JSON.stringify(run(candles, actions, { path }).txs)).toBe(walked);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('replaying the same inputs gives the same transactions', () => {
    fc.assert(
      fc.property(scenarioArb, ([candles, actions]) => {
        expect(JSON.stringify(run(candles, actions).txs)).toBe(JSON.stringify(run(candles, actions).txs));
      }),
      { numRuns: 50 },
    );
  });
});
